/**
 * Submitting and reading jobs (spec 4.7–4.10): a job is checked in full when it is submitted,
 * exactly like `POST /v1/tts`, so a bad voice or malformed markup is a 400 then; at most 200 of
 * a key's jobs wait in the queue. Jobs are the account's: every key of the account sees them,
 * sandbox keys the sandbox jobs and live keys the live ones.
 */
import { ApiError } from '../api/errors.js';
import type { SynthesisRequestBody } from '../api/schemas.js';
import type { Principal } from '../auth/authenticate.js';
import type { EngineRegistry } from '../../engine/registry.js';
import { enginesFor } from '../speech/live-recognition.js';
import { parseLanguageCandidates, parseVocabulary } from '../speech/recognition-request.js';
import { decodeRecording } from '../speech/recognition-service.js';
import { planSynthesis } from '../speech/synthesis-request.js';
import type { JobRecord, JobRepository } from '../store/store.js';
import { CallbackTargetError, checkCallbackTarget, type CallbackAllowList, type Resolver } from './callback-target.js';
import { newJobId, resultName, uploadName, type JobRunner } from './job-runner.js';

/** Jobs of one key that may wait in the queue (spec 8). */
export const MAX_QUEUED_JOBS_PER_KEY = 200;
/** Seconds a key whose queue is full is told to wait. */
const QUEUE_FULL_RETRY_SECONDS = 10;

/** A job as submitted: a synthesis request, its kind, and where to report its end. */
export type JobSubmission = SynthesisRequestBody & { readonly kind: 'tts'; readonly callback_url?: string };

/** Submits and finds jobs. */
export class JobService {
  constructor(
    private readonly jobs: JobRepository,
    private readonly engines: EngineRegistry,
    readonly runner: JobRunner,
    private readonly callbacks: { readonly allow: CallbackAllowList; readonly resolver?: Resolver },
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Queues a job after checking it like a synthesis request.
   * @throws ApiError with the code `POST /v1/tts` would give, 400 for a callback target that is refused, 503 when no live engine runs, or 429 `tts.rate_limited` when the key has 200 jobs queued
   */
  async submit(principal: Principal, submission: JobSubmission): Promise<JobRecord> {
    const { kind, callback_url: callbackUrl, ...request } = submission;
    const plan = planSynthesis(request, false);
    await this.checkCallback(callbackUrl, 'tts');
    if (principal.environment === 'live' && !this.engines.ttsFor(plan.model, plan.voice, plan.speech.document)) {
      throw new ApiError('tts.unavailable', 'no speech synthesis engine is running on this deployment yet; sandbox keys (sv_test_…) work');
    }
    await this.checkQueue(principal, 'tts');
    return this.queue(this.newJob(principal, kind, JSON.stringify(request), callbackUrl));
  }

  /**
   * Queues a recognition job of an uploaded recording, checked like `POST /v1/stt` (languages,
   * vocabulary, a recording that decodes); the recording waits beside the job until it ran.
   * @throws ApiError with the code `POST /v1/stt` would give, 400 for a refused callback target, or 429 `stt.rate_limited` when the key has 200 jobs queued
   */
  async submitRecognition(principal: Principal, audio: Buffer, fields: Readonly<Record<string, string>>): Promise<JobRecord> {
    const candidates = parseLanguageCandidates(fields['lang']);
    parseVocabulary(fields['vocabulary']);
    // A language no installed recogniser serves is refused now, not when the job runs.
    if (principal.environment === 'live') enginesFor(this.engines.live.stt, candidates);
    await decodeRecording(audio);
    await this.checkCallback(fields['callback_url'], 'stt');
    await this.checkQueue(principal, 'stt');
    const request = {
      ...(fields['lang'] !== undefined ? { lang: fields['lang'] } : {}),
      ...(fields['vocabulary'] !== undefined ? { vocabulary: fields['vocabulary'] } : {}),
    };
    const job = this.newJob(principal, 'stt', JSON.stringify(request), fields['callback_url']);
    await this.runner.blobs.put(uploadName(job.id), [audio]);
    try {
      return await this.queue(job);
    } catch (error) {
      // No job points at the recording: nothing would ever remove it.
      await this.runner.blobs.remove(uploadName(job.id)).catch(() => undefined);
      throw error;
    }
  }

  private async checkCallback(callbackUrl: string | undefined, family: 'tts' | 'stt'): Promise<void> {
    if (callbackUrl === undefined) return;
    try {
      await checkCallbackTarget(callbackUrl, this.callbacks.allow, this.callbacks.resolver);
    } catch (error) {
      if (error instanceof CallbackTargetError) throw ApiError.of(family, 'invalid_request', error.message);
      throw error;
    }
  }

  private async checkQueue(principal: Principal, family: 'tts' | 'stt'): Promise<void> {
    if ((await this.jobs.queuedOf(principal.keyId)) < MAX_QUEUED_JOBS_PER_KEY) return;
    throw ApiError.of(
      family,
      'rate_limited',
      `${MAX_QUEUED_JOBS_PER_KEY} jobs of this key are already queued; submit more once some have started (GET /v1/jobs)`,
      {
        retryAfterSeconds: QUEUE_FULL_RETRY_SECONDS,
      },
    );
  }

  private newJob(principal: Principal, kind: JobRecord['kind'], request: string, callbackUrl: string | undefined): JobRecord {
    return {
      id: newJobId(),
      accountId: principal.accountId,
      keyId: principal.keyId,
      environment: principal.environment,
      kind,
      status: 'queued',
      request,
      createdAt: this.now().toISOString(),
      startedAt: null,
      finishedAt: null,
      audio: null,
      resultExpiresAt: null,
      purgedAt: null,
      error: null,
      attempts: 0,
      callbackUrl: callbackUrl ?? null,
      callback: { deliveredAt: null, attempts: 0, error: null },
      transcript: null,
    };
  }

  private async queue(job: JobRecord): Promise<JobRecord> {
    await this.jobs.insert(job);
    this.runner.queued();
    return job;
  }

  /** The account's jobs in the key's environment, newest first. */
  list(principal: Principal, limit: number): Promise<JobRecord[]> {
    return this.jobs.list(principal.accountId, principal.environment, limit);
  }

  /**
   * A job of the key's account and environment.
   * @throws ApiError 400 `tts.invalid_request` when there is none (spec 4.9)
   */
  async get(principal: Principal, id: string): Promise<JobRecord> {
    const job = await this.jobs.findById(id);
    if (!job || job.accountId !== principal.accountId || job.environment !== principal.environment) {
      throw new ApiError('tts.invalid_request', `no job ${JSON.stringify(id.slice(0, 60))} for this key's account; GET /v1/jobs lists them`);
    }
    return job;
  }

  /**
   * A succeeded job's audio.
   * @throws ApiError 400 `tts.invalid_request` when the job does not exist, has not succeeded, or its result expired (spec 4.10)
   */
  async audio(principal: Principal, id: string): Promise<{ job: JobRecord; bytes: Buffer }> {
    const job = await this.get(principal, id);
    if (job.kind === 'stt') throw new ApiError('tts.invalid_request', `job ${job.id} is a recognition: its result is the transcript in GET /v1/jobs/{id}`);
    if (job.status !== 'succeeded' || !job.audio) {
      const why = job.status === 'failed' ? `failed (${job.error?.code ?? 'unknown'})` : `is ${job.status}`;
      throw new ApiError('tts.invalid_request', `job ${job.id} ${why}: it has no audio${job.status === 'failed' ? '' : ' yet; poll GET /v1/jobs/{id}'}`);
    }
    if (job.purgedAt !== null || (job.resultExpiresAt !== null && job.resultExpiresAt <= this.now().toISOString())) {
      throw new ApiError('tts.invalid_request', `the result of job ${job.id} expired at ${job.resultExpiresAt} (results are kept 48 hours)`);
    }
    const bytes = await this.runner.blobs.get(resultName(job.id));
    // Removed by the purge between the look above and the read.
    if (!bytes) throw new ApiError('tts.invalid_request', `the result of job ${job.id} expired (results are kept 48 hours)`);
    return { job, bytes };
  }
}
