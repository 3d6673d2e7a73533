/** Schemas of the jobs endpoints (spec 2.6, 4.7–4.10). */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, SynthesisRequestSchema } from './schemas.js';

/** Body of `POST /v1/jobs`: a synthesis request (spec 2.1) and its kind. */
export const JobSubmissionSchema = Type.Object(
  {
    kind: StringEnum(['tts'] as const, { description: 'tts: an asynchronous synthesis.' }),
    ...SynthesisRequestSchema.properties,
    callback_url: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          'https URL, without credentials, whose name resolves to public addresses only: the Job is POSTed there, signed, when it finishes (spec 6.3).',
      }),
    ),
  },
  { additionalProperties: false, $id: 'JobSubmission' },
);

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** A job (spec 2.6). */
export const JobSchema = Type.Object(
  {
    id: Type.String(),
    kind: StringEnum(['tts', 'stt'] as const),
    status: StringEnum(['queued', 'running', 'succeeded', 'failed'] as const),
    environment: StringEnum(['live', 'sandbox'] as const),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Nullable(Type.String({ format: 'date-time' })),
    finished_at: Nullable(Type.String({ format: 'date-time' })),
    audio_seconds: Nullable(Type.Number({ minimum: 0 })),
    result_expires_at: Nullable(Type.String({ format: 'date-time', description: '48 hours after the job finished.' })),
    audio: Type.Optional(
      Type.Object(
        {
          encoding: Type.String(),
          media_type: Type.String(),
          sample_rate_hz: Type.Integer(),
          byte_length: Type.Integer({ minimum: 0 }),
          url: Type.String({ description: 'GET it with the same key.' }),
        },
        { description: 'Present once the job has succeeded.' },
      ),
    ),
    callback: Type.Optional(
      Type.Object(
        {
          delivered_at: Nullable(Type.String({ format: 'date-time' })),
          attempts: Type.Integer({ minimum: 0 }),
          error: Nullable(Type.String()),
        },
        { description: 'Present when the job carried callback_url.' },
      ),
    ),
    transcript: Type.Optional(
      Nullable(
        Type.Object(
          {
            text: Type.String(),
            lang: Type.String(),
            words: Type.Array(Type.Object({ w: Type.String(), start: Type.Number(), end: Type.Number(), conf: Type.Number() })),
            duration_s: Type.Number(),
          },
          { description: 'Present on a finished recognition job (null when it failed): what POST /v1/stt would answer.' },
        ),
      ),
    ),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  },
  { $id: 'Job' },
);

/** The body of `GET /v1/jobs`. */
export const JobListSchema = Type.Object({ jobs: Type.Array(JobSchema, { description: 'Newest first.' }) }, { $id: 'JobList' });

/** The query of `GET /v1/jobs`. */
export const JobListQuerySchema = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Jobs to list, 1 to 100.' })) },
  { additionalProperties: false },
);

export type JobListQuery = Static<typeof JobListQuerySchema>;
