/** A job as the API shows it (spec 2.6). */
import type { JobRecord, JobTranscript } from '../store/store.js';

/** The `Job` of spec 2.6. */
export interface JobView {
  readonly id: string;
  readonly kind: JobRecord['kind'];
  readonly status: JobRecord['status'];
  readonly environment: JobRecord['environment'];
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly audio_seconds: number | null;
  readonly result_expires_at: string | null;
  readonly audio?: { encoding: string; media_type: string; sample_rate_hz: number; byte_length: number; url: string };
  readonly callback?: { delivered_at: string | null; attempts: number; error: string | null };
  readonly transcript?: JobTranscript | null;
  readonly error: { code: string; message: string } | null;
}

/** The view of a job; `baseUrl` is the public address with `/v1`, for the audio's url. */
export function jobView(job: JobRecord, baseUrl: string): JobView {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    environment: job.environment,
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    audio_seconds: job.audio ? job.audio.seconds : job.transcript ? job.transcript.duration_s : null,
    result_expires_at: job.resultExpiresAt,
    ...(job.status === 'succeeded' && job.audio
      ? {
          audio: {
            encoding: job.audio.encoding,
            media_type: job.audio.mediaType,
            sample_rate_hz: job.audio.sampleRateHz,
            byte_length: job.audio.byteLength,
            url: `${baseUrl}/jobs/${job.id}/audio`,
          },
        }
      : {}),
    ...(job.callbackUrl !== null ? { callback: { delivered_at: job.callback.deliveredAt, attempts: job.callback.attempts, error: job.callback.error } } : {}),
    ...(job.kind === 'stt' && job.status !== 'queued' && job.status !== 'running' ? { transcript: job.transcript } : {}),
    error: job.error,
  };
}
