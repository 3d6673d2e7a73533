/**
 * Runs the queued synthesis jobs (spec 2.6, 3): one at a time, behind interactive traffic —
 * a job is synthesised sentence by sentence, each sentence only once the engine has done no
 * foreground work for a moment and asking for its audio an hour "later", so every interactive
 * request waiting for a worker gets it first and a job holds a worker for one sentence at
 * most; its audio is resampled and encoded on a thread of low priority, not the event loop. A
 * job is metered like a request (mode `batch`, its id as request id, so a job that is run again
 * after a crash is billed once). Results are files (mode 0600) kept 48 hours after the job
 * finished, then removed.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../../engine/registry.js';
import type { TtsEngine } from '../../engine/types.js';
import { ApiError } from '../api/errors.js';
import { BackgroundEncoder } from '../audio/background-encoder.js';
import type { SynthesisRequestBody } from '../api/schemas.js';
import type { Principal } from '../auth/authenticate.js';
import { LIMITS } from '../catalog/limits.js';
import type { UsageMeter } from '../metering/usage-meter.js';
import { audioTooLong, planSynthesis, type SynthesisPlan } from '../speech/synthesis-request.js';
import { synthesizeInBackground } from '../speech/background-synthesis.js';
import { synthesisClaimSeconds } from '../speech/speech-length.js';
import { TextSegmenter } from '../speech/text-segmenter.js';
import type { BlobStore } from '../store/blob-store.js';
import type { JobRecord, JobRepository, JobTranscript } from '../store/store.js';
import { recognizeLive } from '../speech/live-recognition.js';
import { parseLanguageCandidates, parseVocabulary } from '../speech/recognition-request.js';
import { decodeRecording, recognizeBatch } from '../speech/recognition-service.js';
import type { CallbackSender } from './callback-sender.js';

/** How long a result is kept after its job finished (spec 1, 8). */
export const JOB_RETENTION_MS = 48 * 3600 * 1000;
/** How far ahead a job's synthesis says it needs its audio: later than any interactive request. */
const BACKGROUND_MS = 3600 * 1000;
/**
 * How long the engine must have done no foreground work before a job synthesises its next
 * sentence: a caller's requests that follow each other closely all go by before the job goes on.
 */
const QUIET_MS = 25;
/** How often a waiting job looks again. */
const QUIET_POLL_MS = 5;
/** How often the results are looked at for expiry. */
const PURGE_EVERY_MS = 10 * 60 * 1000;
/** How often the jobs of runners that died (another instance on a shared store) are looked for. */
const ORPHAN_SWEEP_MS = 30_000;

/**
 * A plain text's sentences, each planned as the request with that text, so that the job takes
 * an engine worker for one sentence at a time; markup (whose elements may span sentences) is
 * one piece, and so is a text a sentence of which cannot be planned on its own.
 */
function piecesOf(request: SynthesisRequestBody, whole: SynthesisPlan): SynthesisPlan[] {
  if (request.text.trimStart().startsWith('<speak')) return [whole];
  const segmenter = new TextSegmenter();
  const sentences = [...segmenter.append(request.text), ...segmenter.flush()];
  if (sentences.length <= 1) return [whole];
  try {
    return sentences.map((text) => planSynthesis({ ...request, text }, false));
  } catch {
    return [whole];
  }
}

/** The name of a job's result among the jobs' bytes. */
export function resultName(id: string): string {
  return `${id}.audio`;
}

/** The name of a recognition job's recording among the jobs' bytes, until the job ran. */
export function uploadName(id: string): string {
  return `${id}.upload`;
}

/** A new job id: `job_` and 18 random bytes. */
export function newJobId(): string {
  return `job_${randomBytes(18).toString('base64url')}`;
}

/** What a runner works with. */
export interface JobRunnerOptions {
  readonly jobs: JobRepository;
  readonly engines: EngineRegistry;
  readonly meter: UsageMeter;
  /** Where the results and the recognition jobs' recordings are kept (a folder, or the shared database). */
  readonly blobs: BlobStore;
  readonly logger: Logger;
  /** Delivers the callbacks of finished jobs. */
  readonly callbacks?: CallbackSender;
  readonly now?: () => Date;
  /** Told of every job that is queued, starts, succeeds or fails (the metrics). */
  readonly onState?: (state: 'queued' | 'running' | 'succeeded' | 'failed') => void;
}

/** Takes queued jobs one by one while it runs; {@link wake} after a submission. */
export class JobRunner {
  private running: Promise<void> | null = null;
  /** A wake came while a drain ran: the queue is looked at again once it is done. */
  private wakeAgain = false;
  private stopped = true;
  private abort = new AbortController();
  private purgeTimer: NodeJS.Timeout | null = null;
  private orphanTimer: NodeJS.Timeout | null = null;
  /** Jobs claimed and not yet finished. */
  private current = 0;
  private readonly now: () => Date;
  /** Resamples and encodes the jobs' audio off the event loop. */
  private readonly encoder = new BackgroundEncoder();

  constructor(private readonly options: JobRunnerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Where the results and uploads are kept. */
  get blobs(): BlobStore {
    return this.options.blobs;
  }

  /** Puts jobs that were running when the process died back in the queue, then starts taking jobs. */
  async start(): Promise<void> {
    const requeued = await this.options.jobs.requeueRunning();
    if (requeued > 0) this.options.logger.warn({ requeued }, 'jobs that were running when the process stopped are queued again');
    this.stopped = false;
    // A runner stopped before starts afresh.
    if (this.abort.signal.aborted) this.abort = new AbortController();
    await this.options.callbacks?.resume();
    this.purgeTimer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.purgeTimer.unref();
    this.orphanTimer = setInterval(() => void this.sweepOrphans(), ORPHAN_SWEEP_MS);
    this.orphanTimer.unref();
    await this.purge();
    this.wake();
  }

  /** Queues again the jobs a runner that died left running, and takes them (a shared store). */
  private async sweepOrphans(): Promise<void> {
    try {
      const requeued = await this.options.jobs.requeueOrphaned();
      if (requeued === 0) return;
      this.options.logger.warn({ requeued }, 'jobs another instance was running when it stopped are queued again');
      this.wake();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'looking for jobs of stopped instances failed; trying again later');
    }
  }

  /** Jobs running now (one at a time: 0 or 1). */
  get runningJobs(): number {
    return this.current;
  }

  /** A job was queued: counts it and looks for queued jobs now. */
  queued(): void {
    this.options.onState?.('queued');
    this.wake();
  }

  /** Looks for queued jobs now (a job was submitted). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      // The drain under way may already have found the queue empty: it looks once more.
      this.wakeAgain = true;
      return;
    }
    this.wakeAgain = false;
    // A store that fails while a job ends (the database gone for a moment) is logged here: the
    // job stays running in the store and is queued again at the next start.
    this.running = this.drain()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'the job queue stopped on a store error'))
      .finally(() => {
        this.running = null;
        if (this.wakeAgain) this.wake();
      });
  }

  /** Stops taking jobs; the one running is cut off and goes back to the queue at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    this.abort.abort();
    await this.running;
    await this.encoder.close();
    await this.options.callbacks?.stop();
  }

  /** Waits until the queue is empty or the runner stops (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const job = await this.options.jobs.claim(this.now().toISOString());
      if (!job) return;
      this.current++;
      this.options.onState?.('running');
      try {
        await this.run(job);
      } finally {
        this.current--;
      }
    }
  }

  private async run(job: JobRecord): Promise<void> {
    const logger = this.options.logger.child({ job: job.id });
    const principal: Principal = { keyId: job.keyId, accountId: job.accountId, environment: job.environment, keyStatus: null };
    if (job.kind === 'stt') return this.recognise(job, principal, logger);
    const result = resultName(job.id);
    try {
      const request = JSON.parse(job.request) as SynthesisRequestBody;
      const plan = planSynthesis(request, false);
      const engines = this.options.engines;
      const engine = job.environment === 'sandbox' ? engines.sandbox.tts : engines.ttsFor(plan.model, plan.voice, plan.speech.document);
      if (!engine) throw new ApiError('tts.unavailable', 'no speech synthesis engine is running on this deployment');
      const budget = await this.options.meter.lease(principal, 'tts', 'tts', job.id);
      let outcome;
      try {
        // With a shared store, room for a slow reading is claimed up front, as POST /v1/tts does.
        await budget.ensureRoom(0, synthesisClaimSeconds(plan.speech.document, plan.speed));
        outcome = await synthesizeInBackground(
          { engine, dialect: engines.dialect },
          piecesOf(request, plan),
          this.encoder,
          this.abort.signal,
          (seconds) => {
            if (seconds > LIMITS.ttsMaxAudioSeconds) throw audioTooLong(`more than ${LIMITS.ttsMaxAudioSeconds} s`);
            budget.drawTo(seconds);
          },
          performance.now() + BACKGROUND_MS,
          () => this.quiet(engine),
        );
        await this.options.blobs.put(result, [outcome.audio]);
      } catch (error) {
        budget.release();
        throw error;
      }
      // The result is kept before the job is billed and marked done: a crash in between runs it again, billed once.
      await budget.commit({ mode: 'batch' }, outcome.durationSeconds, true);
      await this.finish(job, 'succeeded', {
        encoding: plan.format.id,
        mediaType: outcome.mediaType,
        sampleRateHz: plan.sampleRateHz,
        byteLength: outcome.audio.length,
        seconds: Math.round(outcome.durationSeconds * 1000) / 1000,
      });
      logger.info({ seconds: outcome.durationSeconds }, 'job succeeded');
    } catch (error) {
      await this.options.blobs.remove(result).catch(() => undefined);
      // Stopped mid-job: it stays running in the store and is queued again at the next start.
      if (this.abort.signal.aborted) return;
      const failure = error instanceof ApiError ? error : new ApiError('tts.internal_error', null);
      if (!(error instanceof ApiError)) logger.error({ err: error }, 'job failed');
      await this.finish(job, 'failed', null, { code: failure.code, message: failure.detail ?? failure.message });
    }
  }

  /** Runs a recognition job: the recording as `POST /v1/stt` hears it, metered as batch recognition. */
  private async recognise(job: JobRecord, principal: Principal, logger: Logger): Promise<void> {
    const upload = uploadName(job.id);
    try {
      const request = JSON.parse(job.request) as { lang?: string; vocabulary?: string };
      const plan = { candidates: parseLanguageCandidates(request.lang), vocabulary: parseVocabulary(request.vocabulary) };
      const engines = this.options.engines;
      const budget = await this.options.meter.lease(principal, 'stt', 'stt', job.id);
      let result;
      try {
        const recording = await this.options.blobs.get(upload);
        if (!recording) throw new ApiError('stt.internal_error', "the job's recording is gone");
        const decoded = await decodeRecording(recording);
        await budget.ensureRoom(decoded.durationSeconds);
        result =
          job.environment === 'sandbox'
            ? await recognizeBatch(engines.sandbox.stt, decoded, plan, this.abort.signal)
            : await recognizeLive(engines.live.stt, decoded, plan, this.abort.signal);
      } catch (error) {
        budget.release();
        throw error;
      }
      await budget.commit({ mode: 'batch' }, result.durationSeconds, true);
      const transcript = { text: result.text, lang: result.lang, words: result.words, duration_s: result.durationSeconds };
      await this.finish(job, 'succeeded', null, null, transcript);
      await this.removeUpload(upload, logger);
      logger.info({ seconds: result.durationSeconds }, 'recognition job succeeded');
    } catch (error) {
      // Stopped mid-job: the recording stays for the run after the next start.
      if (this.abort.signal.aborted) return;
      const failure = error instanceof ApiError ? error : new ApiError('stt.internal_error', null);
      if (!(error instanceof ApiError)) logger.error({ err: error }, 'recognition job failed');
      await this.finish(job, 'failed', null, { code: failure.code, message: failure.detail ?? failure.message });
      await this.removeUpload(upload, logger);
    }
  }

  /**
   * Removes a finished job's recording. A removal that fails is logged, not thrown: the job's
   * outcome is already in the store and must not be reported a second time as a failure.
   */
  private async removeUpload(upload: string, logger: Logger): Promise<void> {
    await this.options.blobs.remove(upload).catch((error: unknown) => logger.warn({ err: error, upload }, "the job's recording was not removed"));
  }

  /** Waits until `engine` has had no foreground work for {@link QUIET_MS} (or the runner stops). */
  private async quiet(engine: TtsEngine): Promise<void> {
    while (!this.abort.signal.aborted && (engine.foregroundIdleMs?.() ?? Number.POSITIVE_INFINITY) < QUIET_MS) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
    }
    this.abort.signal.throwIfAborted();
  }

  /** Ends a running job. */
  private async finish(
    job: JobRecord,
    status: 'succeeded' | 'failed',
    audio: JobRecord['audio'],
    error: JobRecord['error'] = null,
    transcript: JobTranscript | null = null,
  ): Promise<void> {
    const finishedAt = this.now();
    await this.options.jobs.finish(job.id, {
      status,
      finishedAt: finishedAt.toISOString(),
      resultExpiresAt: new Date(finishedAt.getTime() + JOB_RETENTION_MS).toISOString(),
      audio,
      transcript,
      error,
    });
    this.options.onState?.(status);
    this.options.callbacks?.send(job);
  }

  /** Removes the results whose 48 hours are over. */
  async purge(): Promise<number> {
    const now = this.now().toISOString();
    let removed = 0;
    for (const id of await this.options.jobs.expired(now, 1000)) {
      await this.options.blobs.remove(resultName(id));
      await this.options.jobs.markPurged(id, now);
      removed++;
    }
    if (removed > 0) this.options.logger.info({ removed }, 'expired job results removed');
    return removed;
  }
}
