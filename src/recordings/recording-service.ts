/**
 * Voicemail recordings: a call hands a caller's message to {@link RecordingService.save}; the
 * service keeps it as a WAV (a file, or a row of the shared database) with an index entry, transcribes it in the background,
 * announces it to the webhook once the transcript is settled, serves it to the API and
 * deletes it when its retention is over.
 */
import type { Logger } from 'pino';
import type { LiveRecognisers } from '../../engine/registry.js';
import { wavHeader } from '../audio/wav.js';
import type { BlobStore, OpenedBlob } from '../store/blob-store.js';
import type { RecordingRecord, RecordingRepository, RecordingTranscript } from '../store/store.js';
import type { NewRecording, Recording } from './recording.js';
import { decodeCursor, encodeCursor } from './recording-cursor.js';
import { isRecordingId, newRecordingId } from './recording-id.js';
import { canTranscribe, transcribeWav } from './recording-transcriber.js';
import { recordingView } from './recording-view.js';
import type { RecordingsConfig } from './recordings-config.js';
import { WebhookSender, type SenderTiming } from './webhook-sender.js';

export type { NewRecording, Recording } from './recording.js';

/** Name of the recordings folder inside the data folder. */
export const RECORDINGS_FOLDER = 'recordings';
/** Largest page of {@link RecordingService.list}. */
export const MAX_PAGE = 100;
/** How often the retention sweep runs after the one at start. */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;
/** Recordings deleted per query of a sweep, so that a large backlog is never loaded at once. */
const SWEEP_BATCH = 100;
const LOWEST_RATE_HZ = 8000;
const HIGHEST_RATE_HZ = 48000;

/** The name of a recording's WAV among the recordings' bytes. */
function wavName(id: string): string {
  return `${id}.wav`;
}

/** What a {@link RecordingService} works with. */
export interface RecordingServiceOptions {
  /** Where the WAV files are kept: `<data folder>/recordings`, or the shared database (`Store.blobs`). */
  readonly audio: BlobStore;
  readonly repository: RecordingRepository;
  /** The live recognisers; a language none of them serves is transcribed as `unavailable`. */
  readonly recognisers: LiveRecognisers;
  readonly config: RecordingsConfig;
  readonly logger: Logger;
  /** The clock of creation times and sweeps. */
  readonly now?: () => Date;
  /** Timing of webhook deliveries (tests shorten the waits between attempts). */
  readonly webhookTiming?: SenderTiming;
}

/** One page of the newest-first list. */
export interface RecordingPage {
  readonly recordings: Recording[];
  /** Pass as `before` for the next page; `null` on the last one. */
  readonly next: string | null;
}

/** A recording with its opened audio. */
export interface RecordingAudio extends OpenedBlob {
  readonly recording: Recording;
}

/** Keeps, transcribes, announces, serves and expires voicemail recordings. */
export class RecordingService {
  private readonly audio: BlobStore;
  private readonly repository: RecordingRepository;
  private readonly recognisers: LiveRecognisers;
  private readonly retentionDays: number;
  private readonly webhook: WebhookSender | null;
  private readonly logger: Logger;
  private readonly now: () => Date;
  /** Aborted at close: stops transcriptions and webhook deliveries in progress. */
  private readonly stopping = new AbortController();
  /** Background work in progress; close waits for it. */
  private readonly work = new Set<Promise<void>>();
  /**
   * The end of the transcription queue. One transcription at a time: voicemail is not urgent,
   * and the recognisers' capacity belongs to live calls first.
   */
  private queue: Promise<unknown> = Promise.resolve();
  private sweeps: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: RecordingServiceOptions) {
    this.audio = options.audio;
    this.repository = options.repository;
    this.recognisers = options.recognisers;
    this.retentionDays = options.config.retentionDays;
    this.logger = options.logger;
    this.webhook = options.config.webhook ? new WebhookSender(options.config.webhook, options.logger, options.webhookTiming) : null;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Keeps a caller's message: its WAV file (mode 0600) and index entry exist when this
   * resolves. Transcription and the announcement follow in the background.
   * @throws RangeError for a sample rate outside 8–48 kHz; Error once the service is closed.
   */
  async save(recording: NewRecording): Promise<Recording> {
    if (this.closed) throw new Error('the recording service is closed');
    const rate = recording.sampleRateHz;
    if (!Number.isInteger(rate) || rate < LOWEST_RATE_HZ || rate > HIGHEST_RATE_HZ) {
      throw new RangeError(`a recording's sample rate must be a whole number of Hz from ${LOWEST_RATE_HZ} to ${HIGHEST_RATE_HZ}, got ${rate}`);
    }
    const id = newRecordingId();
    // Samples are little-endian in memory on every platform Node runs this service on.
    const samples = Buffer.from(recording.pcm.buffer, recording.pcm.byteOffset, recording.pcm.byteLength);
    const sizeBytes = await this.audio.put(wavName(id), [wavHeader(rate, samples.length), samples]);
    const record: RecordingRecord = {
      id,
      callId: recording.callId,
      route: recording.route,
      caller: recording.caller,
      called: recording.called,
      language: recording.language,
      createdAt: this.now().toISOString(),
      durationSeconds: Math.round((recording.pcm.length / rate) * 1000) / 1000,
      sizeBytes,
      sampleRateHz: rate,
      endedBy: recording.endedBy,
      transcript: canTranscribe(this.recognisers, recording.language)
        ? { status: 'pending', text: null, confidence: null }
        : { status: 'unavailable', text: null, confidence: null },
    };
    try {
      await this.repository.insert(record);
    } catch (error) {
      await this.audio.remove(wavName(id));
      throw error;
    }
    this.logger.info({ recording: id, call: record.callId, seconds: record.durationSeconds, transcript: record.transcript.status }, 'recording saved');
    this.track(this.settle(record));
    return this.withExpiry(record);
  }

  /**
   * A page of recordings, newest first.
   * @throws RangeError for a limit outside 1–{@link MAX_PAGE}; InvalidCursorError for a
   *   `before` that is no `next` of this list.
   */
  async list(options: { readonly limit: number; readonly before?: string | null }): Promise<RecordingPage> {
    const { limit, before } = options;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new RangeError(`limit must be 1 to ${MAX_PAGE}, got ${limit}`);
    const position = before ? decodeCursor(before) : undefined;
    // One more than asked tells whether another page follows.
    const rows = await this.repository.page(limit + 1, position);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { recordings: page.map((row) => this.withExpiry(row)), next: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /** The recording `id`, or `null` when there is none (or `id` is not a recording id at all). */
  async get(id: string): Promise<Recording | null> {
    if (!isRecordingId(id)) return null;
    const record = await this.repository.findById(id);
    return record ? this.withExpiry(record) : null;
  }

  /** The recording `id` with its WAV file opened for streaming, or `null` when either is missing. */
  async openAudio(id: string): Promise<RecordingAudio | null> {
    const recording = await this.get(id);
    const audio = recording && (await this.audio.open(wavName(recording.id)));
    return recording && audio ? { recording, ...audio } : null;
  }

  /** Deletes a recording's file and entry; false when there was no such recording. */
  async delete(id: string): Promise<boolean> {
    if (!isRecordingId(id) || !(await this.repository.findById(id))) return false;
    await this.remove(id);
    return true;
  }

  /**
   * Deletes every recording whose retention is over at `now` (none while retention is 0).
   * @returns how many were deleted.
   */
  async sweepExpired(now: Date = this.now()): Promise<number> {
    if (this.retentionDays === 0) return 0;
    const cutoff = new Date(now.getTime() - this.retentionDays * DAY_MS).toISOString();
    let deleted = 0;
    for (;;) {
      const ids = await this.repository.createdUpTo(cutoff, SWEEP_BATCH);
      if (ids.length === 0) return deleted;
      for (const id of ids) {
        await this.remove(id);
        deleted++;
      }
    }
  }

  /**
   * Starts the upkeep of a serving process: now, files a stopped process left half-written are
   * removed, transcriptions it left unfinished are taken up again and expired recordings are
   * swept; then the sweep repeats hourly until {@link close}.
   */
  start(): void {
    if (this.sweeps || this.closed) return;
    this.track(this.resume());
    this.sweeps = setInterval(() => this.track(this.sweep()), SWEEP_INTERVAL_MS).unref();
  }

  /** Resolves once no transcription, announcement or sweep is in progress. */
  async whenIdle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /**
   * Stops the sweeps, interrupts transcriptions and deliveries in progress and waits for them.
   * An interrupted transcription stays `pending` and is taken up again by the next {@link start}.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeps) clearInterval(this.sweeps);
    this.sweeps = null;
    this.stopping.abort(new Error('the recording service is closing'));
    await this.whenIdle();
  }

  private withExpiry(record: RecordingRecord): Recording {
    // Derived, not stored: a changed retention applies to the recordings already kept.
    const expiresAt = this.retentionDays === 0 ? null : new Date(Date.parse(record.createdAt) + this.retentionDays * DAY_MS).toISOString();
    return { ...record, expiresAt };
  }

  /** File first: an entry without a file is answered as missing, a file without an entry would never be found again. */
  private async remove(id: string): Promise<void> {
    await this.audio.remove(wavName(id));
    await this.repository.delete(id);
  }

  private track(task: Promise<void>): void {
    const tracked = task.catch((error: unknown) => this.logger.error({ err: error }, 'recording upkeep failed')).finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  /** Transcribes a pending recording, then announces it. */
  private async settle(record: RecordingRecord): Promise<void> {
    if (record.transcript.status === 'pending') {
      const transcript = await this.transcribe(record);
      if (!transcript) return;
      await this.repository.setTranscript(record.id, transcript);
      this.logger.info({ recording: record.id, transcript: transcript.status }, 'recording transcribed');
    }
    await this.announce(record.id);
  }

  /** The transcript, once the queue reaches the recording; `null` when closing interrupted it. */
  private transcribe(record: RecordingRecord): Promise<RecordingTranscript | null> {
    const turn = this.queue.then(async (): Promise<RecordingTranscript | null> => {
      if (this.stopping.signal.aborted) return null;
      try {
        const bytes = await this.audio.get(wavName(record.id), this.stopping.signal);
        if (!bytes) throw new Error('the recording has no audio');
        return await transcribeWav(this.recognisers, bytes, record.language, this.stopping.signal);
      } catch (error) {
        if (this.stopping.signal.aborted) return null;
        this.logger.warn({ recording: record.id, err: error }, 'recording not transcribed');
        return { status: 'failed', text: null, confidence: null };
      }
    });
    this.queue = turn;
    return turn;
  }

  /** POSTs `recording.created` with the recording as it stands now; nothing for one deleted meanwhile. */
  private async announce(id: string): Promise<void> {
    if (!this.webhook || this.stopping.signal.aborted) return;
    const recording = await this.get(id);
    if (!recording) return;
    const body = JSON.stringify({ type: 'recording.created', recording: recordingView(recording) });
    await this.webhook.deliver(body, { recording: id, event: 'recording.created' }, this.stopping.signal);
  }

  private async resume(): Promise<void> {
    const abandoned = await this.audio.removeAbandoned(this.now());
    if (abandoned > 0) this.logger.warn({ files: abandoned }, 'removed recording files a stopped process left half-written');
    for (const record of await this.repository.withTranscriptStatus('pending')) this.track(this.settle(record));
    await this.sweep();
  }

  private async sweep(): Promise<void> {
    const deleted = await this.sweepExpired();
    if (deleted > 0) this.logger.info({ deleted, retentionDays: this.retentionDays }, 'expired recordings deleted');
  }
}
