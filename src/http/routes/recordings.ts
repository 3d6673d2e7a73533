import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ErrorBodySchema } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';
import { InvalidCursorError } from '../../recordings/recording-cursor.js';
import { MAX_PAGE } from '../../recordings/recording-service.js';
import { recordingView, RecordingSchema } from '../../recordings/recording-view.js';
import { queryValidator } from './query-validator.js';

/** Page size when `limit` is not given. */
const DEFAULT_PAGE = 20;

const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: `Recordings per page, 1 to ${MAX_PAGE}.` })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The next value of the previous page.' })),
  },
  { additionalProperties: false },
);

const RecordingPageSchema = Type.Object(
  {
    recordings: Type.Array(RecordingSchema),
    next: Type.Union([Type.String(), Type.Null()], { description: 'Pass as before for the next page; null on the last page.' }),
  },
  { $id: 'RecordingPage' },
);

const IdParamsSchema = Type.Object({ id: Type.String({ description: 'A recording id (rec_…).' }) });

const errors = { '4xx': ErrorBodySchema, '5xx': ErrorBodySchema };
/** Recordings are heard and read with recognition, so their errors are of that family. */
const settings = { sprachrohr: { family: 'stt' as const } };

/**
 * Recordings are real callers' voices: sandbox keys, which must never reach real data, are
 * refused.
 */
async function requireLiveKey(request: FastifyRequest): Promise<void> {
  if (request.principal?.environment === 'live') return;
  throw new ApiError('stt.forbidden', "recordings hold callers' real messages and need a live key (sv_…); sandbox keys (sv_test_…) cannot reach them");
}

function notFound(id: string): ApiError {
  return new ApiError('stt.not_found', `no recording ${JSON.stringify(id.slice(0, 40))}; it may have been deleted or expired`);
}

/** `GET /v1/recordings`, `GET`/`DELETE /v1/recordings/{id}` and `GET /v1/recordings/{id}/audio`. */
export function registerRecordingRoutes(app: FastifyInstance, services: AppServices): void {
  const recordings = services.recordings;

  app.get<{ Querystring: Static<typeof ListQuerySchema> }>(
    '/v1/recordings',
    {
      config: settings,
      onRequest: requireLiveKey,
      validatorCompiler: queryValidator,
      schema: {
        summary: 'Voicemail recordings, newest first',
        tags: ['recordings'],
        querystring: ListQuerySchema,
        response: { 200: RecordingPageSchema, ...errors },
      },
    },
    async (request) => {
      try {
        const page = await recordings.list({ limit: request.query.limit ?? DEFAULT_PAGE, before: request.query.before ?? null });
        return { recordings: page.recordings.map(recordingView), next: page.next };
      } catch (error) {
        if (error instanceof InvalidCursorError) throw new ApiError('stt.invalid_request', error.message);
        throw error;
      }
    },
  );

  app.get<{ Params: Static<typeof IdParamsSchema> }>(
    '/v1/recordings/:id',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: { summary: 'One recording and its transcript', tags: ['recordings'], params: IdParamsSchema, response: { 200: RecordingSchema, ...errors } },
    },
    async (request) => {
      const recording = await recordings.get(request.params.id);
      if (!recording) throw notFound(request.params.id);
      return recordingView(recording);
    },
  );

  app.get<{ Params: Static<typeof IdParamsSchema> }>(
    '/v1/recordings/:id/audio',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: {
        summary: 'The audio of a recording (WAV, PCM16 mono)',
        tags: ['recordings'],
        params: IdParamsSchema,
        response: {
          200: { description: 'The WAV file as it was stored.', content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } } },
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const audio = await recordings.openAudio(request.params.id);
      if (!audio) throw notFound(request.params.id);
      return reply
        .type('audio/wav')
        .header('Content-Length', String(audio.sizeBytes))
        .header('X-Speech-Audio-Duration', audio.recording.durationSeconds.toFixed(3))
        .header('X-Speech-Audio-Encoding', 'wav')
        .header('X-Speech-Audio-Sample-Rate', String(audio.recording.sampleRateHz))
        .send(audio.stream);
    },
  );

  app.delete<{ Params: Static<typeof IdParamsSchema> }>(
    '/v1/recordings/:id',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: {
        summary: 'Delete a recording, its audio and its transcript',
        tags: ['recordings'],
        params: IdParamsSchema,
        response: { 204: { description: 'Deleted.', type: 'null' }, ...errors },
      },
    },
    async (request, reply) => {
      if (!(await recordings.delete(request.params.id))) throw notFound(request.params.id);
      return reply.code(204).send();
    },
  );
}
