/**
 * A telephony service started the way the process starts it (configuration from variables,
 * engines, dialplans from a folder) on one dialplan of the test's, without speech engines of
 * its own (unless `env` names some) and on a free SIP port, with the teardown that closes all
 * of it. Shared by the call, garbage, guard, drachtio, SIPp and baresip tests.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { EngineRegistry } from '../../engine/registry.js';
import { loadConfig } from '../../src/config.js';
import type { Env } from '../../src/config-values.js';
import { startEngines } from '../../src/server.js';
import type { SipTimers } from '../../src/telephony/sip/sip-transactions.js';
import type { CallMetering } from '../../src/metering/call-meter.js';
import { RecordingService } from '../../src/recordings/recording-service.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { TelephonyService, type CallObserver, type OutboundParts } from '../../src/telephony/telephony-service.js';
import type { RegistrationTiming } from '../../src/telephony/trunks/trunk-registration.js';
import { FileBlobStore } from '../../src/store/file-blob-store.js';

/**
 * A dialplan whose one route takes every number with the synthetic engines; `steps` is its
 * YAML list of steps, indented by six spaces.
 */
export function anyNumberDialplan(steps: string): string {
  return ['name: test', 'routes:', '  - number: "*"', '    engines: synthetic', '    language: en', '    voice: jonas', '    steps:', steps].join('\n');
}

/** A running service, its engines and dialplan folder, and how to stop them. */
export interface StartedTelephony {
  readonly service: TelephonyService;
  readonly engines: EngineRegistry;
  /** Where the calls' voicemails go (files and index in the temporary folder). */
  readonly recordings: RecordingService;
  /** The temporary folder holding the dialplan; a test may keep its own files there. */
  readonly dir: string;
  /** The store in that folder (recordings' index, and the ledger when calls are metered). */
  readonly store: SqliteStore;
  close(): Promise<void>;
}

/**
 * Starts a service with `dialplan` (YAML) as its only dialplan; `env` adds or overrides
 * variables (give every test its own `SPRACHROHR_RTP_PORTS` range: files run in parallel).
 */
export async function startTelephony(
  dialplan: string,
  env: Env,
  options: {
    logger?: Logger;
    timers?: SipTimers;
    metering?: (store: SqliteStore) => CallMetering;
    allowanceCheckMs?: number;
    registrationTiming?: RegistrationTiming;
    /** More files of the dialplan folder (a trunks.yaml), by name. */
    files?: Readonly<Record<string, string>>;
    /** Outbound calls' status events and URL checks. */
    outbound?: OutboundParts;
    /** Told of calls' ends and turns (the metrics). */
    observer?: CallObserver;
  } = {},
): Promise<StartedTelephony> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'telephony-'));
  await fs.writeFile(path.join(dir, 'test.yaml'), dialplan);
  for (const [name, text] of Object.entries(options.files ?? {})) await fs.writeFile(path.join(dir, name), text);
  const config = loadConfig({ SPRACHROHR_TTS_ENGINE: 'none', SPRACHROHR_STT_ENGINE: 'none', SPRACHROHR_SIP_PORT: '0', ...env, SPRACHROHR_DIALPLANS_DIR: dir });
  const engines = await startEngines(config);
  const logger = options.logger ?? pino({ level: 'silent' });
  const store = SqliteStore.open(path.join(dir, 'store.sqlite'));
  const recordings = new RecordingService({
    audio: new FileBlobStore(path.join(dir, 'recordings')),
    repository: store.recordings,
    recognisers: engines.live.stt,
    config: config.recordings,
    logger,
  });
  const service = await TelephonyService.start(config.telephony, engines, logger, {
    recordings,
    webhookSecret: config.recordings.secret,
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.metering ? { metering: options.metering(store) } : {}),
    ...(options.allowanceCheckMs !== undefined ? { allowanceCheckMs: options.allowanceCheckMs } : {}),
    ...(options.registrationTiming ? { registrationTiming: options.registrationTiming } : {}),
    ...(options.outbound ? { outbound: options.outbound } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
  }).catch(async (error: unknown) => {
    await recordings.close();
    await store.close();
    await engines.close();
    throw error;
  });
  return {
    service,
    engines,
    recordings,
    dir,
    store,
    close: async () => {
      await service.close();
      await recordings.close();
      await store.close();
      await engines.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
