/**
 * A recording service on a throwaway store and folder, with a clock the test moves, and
 * messages to save.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LiveRecognisers } from '../../engine/registry.js';
import { RecordingService, type NewRecording } from '../../src/recordings/recording-service.js';
import type { RecordingsConfig } from '../../src/recordings/recordings-config.js';
import type { SenderTiming } from '../../src/recordings/webhook-sender.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { capturedLogger } from '../helpers/captured-logger.js';
import { FileBlobStore } from '../../src/store/file-blob-store.js';

/** Recognisers of a deployment that has none installed. */
export const NO_RECOGNISERS: LiveRecognisers = {
  engines: [],
  engineFor: () => null,
  languages: [],
  unavailable: [],
  languageId: null,
  voiceActivity: 'webrtc',
};

/** A service, what it stands on, and the clock it reads. */
export interface RecordingFixture {
  readonly service: RecordingService;
  readonly store: SqliteStore;
  readonly folder: string;
  readonly logs: Array<Record<string, unknown>>;
  /** Sets the service's clock. */
  setNow(iso: string): void;
  close(): Promise<void>;
}

/** Starts a service; `config` and `recognisers` default to 30 days, no webhook, no recogniser. */
export async function recordingFixture(
  options: { config?: Partial<RecordingsConfig>; recognisers?: LiveRecognisers; webhookTiming?: SenderTiming } = {},
): Promise<RecordingFixture> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-recordings-'));
  const folder = path.join(root, 'recordings');
  const store = SqliteStore.open(':memory:');
  const { logger, logs } = capturedLogger();
  let now = new Date('2026-03-01T08:00:00.000Z');
  const service = new RecordingService({
    audio: new FileBlobStore(folder),
    repository: store.recordings,
    recognisers: options.recognisers ?? NO_RECOGNISERS,
    config: { retentionDays: 30, webhook: null, secret: null, ...options.config },
    logger,
    now: () => now,
    ...(options.webhookTiming ? { webhookTiming: options.webhookTiming } : {}),
  });
  return {
    service,
    store,
    folder,
    logs,
    setNow(iso) {
      now = new Date(iso);
    },
    async close() {
      await service.close();
      await store.close();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}

/** A caller's message: a ramp of distinct samples, so that a byte out of place shows. */
export function message(overrides: Partial<NewRecording> = {}): NewRecording {
  const pcm = Int16Array.from({ length: 8000 }, (_, i) => ((i * 37) % 65536) - 32768);
  return {
    callId: 'a84b4c76e66710@pc33.example.ch',
    route: '+41445551234',
    caller: '+41791234567',
    called: '+41445551234',
    language: 'de-CH',
    pcm,
    sampleRateHz: 8000,
    endedBy: 'silence',
    ...overrides,
  };
}
