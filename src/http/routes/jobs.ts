import { Ajv } from 'ajv';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { takeRequestSlot } from '../../api/request-context.js';
import { readRecognitionForm } from '../recognition-form.js';
import { Type } from '@sinclair/typebox';
import { JobListQuerySchema, JobListSchema, JobSchema, JobSubmissionSchema, type JobListQuery } from '../../api/job-schemas.js';
import { ErrorBodySchema, SYNTHESIS_FIELD_ERRORS } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';
import { jobView } from '../../jobs/job-view.js';
import { MAX_QUEUED_JOBS_PER_KEY, type JobSubmission } from '../../jobs/job-service.js';
import { baseUrlOf } from './discovery.js';
import { queryValidator } from './query-validator.js';

/** Largest JSON body of a job: a synthesis request's. */
const JOB_BODY_LIMIT = 64 * 1024;

const errors = { '4xx': ErrorBodySchema, '5xx': ErrorBodySchema };
const settings = { sprachrohr: { family: 'tts' as const } };
/**
 * The body's check: a JSON job against its schema (the app's Ajv options), while a multipart
 * form (a recognition job, no parsed body) is read and checked part by part in the handler.
 */
const bodyAjv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true, useDefaults: false, strict: false });
const jsonOrForm: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate = bodyAjv.compile(schema as object);
  const check = ((data: unknown) => {
    // A multipart form is not parsed into a body (null); a JSON null is refused by the handler.
    if (httpPart === 'body' && (data === undefined || data === null)) return true;
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  }) as ((data: unknown) => boolean) & { errors?: typeof validate.errors };
  return check;
};

const IdParamsSchema = Type.Object({ id: Type.String({ maxLength: 200, description: 'A job id (job_…).' }) });

/** `POST /v1/jobs`, `GET /v1/jobs`, `GET /v1/jobs/{id}` and `GET /v1/jobs/{id}/audio` (spec 4.7–4.10). */
export function registerJobRoutes(app: FastifyInstance, services: AppServices): void {
  const jobs = services.jobs;

  app.post<{ Body: JobSubmission | undefined }>(
    '/v1/jobs',
    {
      bodyLimit: JOB_BODY_LIMIT,
      // A recognition job's upload is read by the handler, which takes the in-flight slot once it has arrived.
      config: { sprachrohr: { family: 'tts', bodyInHandler: true }, fieldErrors: SYNTHESIS_FIELD_ERRORS },
      validatorCompiler: jsonOrForm,
      schema: {
        summary: 'Submit a synthesis job',
        description:
          'A synthesis request (the fields of POST /v1/tts) with kind tts, checked in full now: what POST /v1/tts would refuse is ' +
          `refused here with the same code. 202 with the job and its Location. At most ${MAX_QUEUED_JOBS_PER_KEY} jobs of a key wait ` +
          'in the queue (then 429 tts.rate_limited with Retry-After). Jobs run one at a time behind interactive traffic, are metered ' +
          'like requests (mode batch), and their audio is kept 48 hours after they finish. A recognition job is multipart/form-data ' +
          'instead: the fields of POST /v1/stt (audio, lang, vocabulary) with kind=stt and an optional callback_url, checked like POST /v1/stt; ' +
          'its transcript comes in the Job.',
        tags: ['jobs'],
        body: JobSubmissionSchema,
        response: { 202: JobSchema, ...errors },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      let job;
      if (request.isMultipart()) {
        const { audio, fields } = await readRecognitionForm(request, ['kind', 'callback_url']);
        await takeRequestSlot(request, reply, services.admission);
        if (fields['kind'] !== 'stt') {
          throw new ApiError(
            'stt.invalid_request',
            `a job sent as multipart/form-data is a recognition: kind must be stt, not ${JSON.stringify(fields['kind'] ?? '')}`,
          );
        }
        job = await jobs.submitRecognition(principal, audio, fields);
      } else {
        if (request.body === null || typeof request.body !== 'object') throw new ApiError('tts.invalid_request', 'the body must be a JSON object');
        await takeRequestSlot(request, reply, services.admission);
        job = await jobs.submit(principal, request.body);
      }
      const base = baseUrlOf(request, services);
      return reply.code(202).header('Location', `${base}/jobs/${job.id}`).send(jobView(job, base));
    },
  );

  app.get<{ Querystring: JobListQuery }>(
    '/v1/jobs',
    {
      config: settings,
      validatorCompiler: queryValidator,
      schema: {
        summary: "The account's jobs, newest first",
        tags: ['jobs'],
        querystring: JobListQuerySchema,
        response: { 200: JobListSchema, ...errors },
      },
    },
    async (request) => {
      const base = baseUrlOf(request, services);
      const listed = await jobs.list(request.principal!, request.query.limit ?? 25);
      return { jobs: listed.map((job) => jobView(job, base)) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id',
    {
      config: settings,
      schema: {
        summary: 'One job, with its result once finished',
        description: 'Status 400 tts.invalid_request when the account has no such job (spec 4.9).',
        tags: ['jobs'],
        params: IdParamsSchema,
        response: { 200: JobSchema, ...errors },
      },
    },
    async (request) => jobView(await jobs.get(request.principal!, request.params.id), baseUrlOf(request, services)),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id/audio',
    {
      config: settings,
      schema: {
        summary: "A succeeded job's audio",
        description:
          'The audio as synthesised, with X-Speech-Audio-Duration and X-Speech-Audio-Encoding. 400 when the job is not finished, not found, or its result has expired.',
        tags: ['jobs'],
        params: IdParamsSchema,
        response: { 200: { description: 'The audio bytes.', content: { 'audio/mpeg': { schema: { type: 'string', format: 'binary' } } } }, ...errors },
      },
    },
    async (request, reply) => {
      const { job, bytes } = await jobs.audio(request.principal!, request.params.id);
      return reply
        .type(job.audio!.mediaType)
        .header('X-Speech-Audio-Duration', job.audio!.seconds.toFixed(3))
        .header('X-Speech-Audio-Encoding', job.audio!.encoding)
        .header('Content-Length', String(bytes.length))
        .send(bytes);
    },
  );
}
