import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LIMITS } from '../../catalog/limits.js';
import { ApiError } from '../../errors.js';
import { parseLanguageCandidates, parseVocabulary } from '../../speech/recognition-request.js';
import { enginesFor, recognizeLive } from '../../speech/live-recognition.js';
import { decodeRecording, recognizeBatch } from '../../speech/recognition-service.js';
import { ErrorBodySchema, RecognitionFormSchema, TranscriptSchema } from '../schemas.js';
import type { AppServices } from '../services.js';

/** Room for the form's boundaries and text fields beyond the audio itself. */
const FORM_OVERHEAD_BYTES = 256 * 1024;
const TEXT_FIELDS = new Set(['lang', 'vocabulary']);

/** How long the rest of an oversized upload is read and thrown away after the answer. */
const LINGER_MS = 2000;

function audioTooLarge(request: FastifyRequest, reply: FastifyReply, detail: string): ApiError {
  // Stop parsing; discard (never buffer) what still arrives, and close the connection shortly
  // after the answer. Closing at once, with unread bytes, resets the connection, and many
  // clients then lose the answer while they are still writing.
  request.raw.unpipe();
  request.raw.resume();
  reply.raw.once('finish', () => setTimeout(() => request.raw.socket?.destroy(), LINGER_MS).unref());
  return new ApiError('stt.audio_too_large', detail);
}

/**
 * Reads an uploaded file part. Settles as soon as the parser's size limit is crossed (its
 * `limit` event), rather than when the truncated part ends, which for the last part of a huge
 * upload would be after the client sent everything.
 */
function readFilePart(file: Readable & { truncated?: boolean }): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const finish = (): void => resolve(file.truncated ? 'too-large' : Buffer.concat(chunks));
    file.on('data', (chunk: Buffer) => chunks.push(chunk));
    file.once('limit', () => {
      chunks.length = 0;
      resolve('too-large');
    });
    file.once('end', finish);
    file.once('close', finish);
    file.once('error', (error: Error & { code?: string }) => (error.code === 'FST_REQ_FILE_TOO_LARGE' ? resolve('too-large') : reject(error)));
  });
}

/** `POST /v1/stt`: batch recognition of an uploaded recording (spec 4.5). */
export function registerSttRoutes(app: FastifyInstance, services: AppServices): void {
  app.post(
    '/v1/stt',
    {
      config: { sprachrohr: { family: 'stt' } },
      schema: {
        summary: 'Transcribe a recording (batch)',
        tags: ['speech-to-text'],
        consumes: ['multipart/form-data'],
        // Documented for OpenAPI; the parts are read and checked by the handler as they stream in.
        body: RecognitionFormSchema,
        response: { 200: TranscriptSchema, '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
      },
      // The form is validated part by part below; schema validation would need the whole body.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const principal = request.principal!;
      const declared = Number(request.headers['content-length'] ?? NaN);
      if (declared > LIMITS.sttMaxUploadBytes + FORM_OVERHEAD_BYTES) {
        throw audioTooLarge(request, reply, `the upload declares ${declared} bytes; audio is limited to 25 MB (${LIMITS.sttMaxUploadBytes} bytes)`);
      }
      if (!request.isMultipart()) throw new ApiError('stt.invalid_request', 'send multipart/form-data with the recording in a part named audio');
      let audio: Buffer | undefined;
      const fields: Record<string, string> = {};
      const parts = request.parts({ limits: { fileSize: LIMITS.sttMaxUploadBytes, files: 1, fields: 8, fieldSize: 64 * 1024, parts: 10 } });
      // Iterated by hand: leaving a for-await loop early would wait for the rest of the upload.
      const iterator = parts[Symbol.asyncIterator]();
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        const part = next.value;
        if (part.type === 'file') {
          if (part.fieldname !== 'audio') {
            part.file.resume();
            throw new ApiError('stt.invalid_request', `unexpected file part "${part.fieldname}"; send the recording in a part named audio`);
          }
          const file = await readFilePart(part.file);
          if (file === 'too-large') throw audioTooLarge(request, reply, `the audio is larger than 25 MB (${LIMITS.sttMaxUploadBytes} bytes)`);
          audio = file;
        } else if (TEXT_FIELDS.has(part.fieldname)) {
          fields[part.fieldname] = String(part.value);
        } else {
          throw new ApiError('stt.invalid_request', `unknown form field "${part.fieldname}"; accepted: audio, lang, vocabulary`);
        }
      }
      if (!audio) throw new ApiError('stt.invalid_request', 'the form has no file part named audio');
      const candidates = parseLanguageCandidates(fields['lang']);
      const vocabulary = parseVocabulary(fields['vocabulary']);
      const plan = { candidates, vocabulary };
      const sandbox = principal.environment === 'sandbox';
      // A language no installed recogniser serves is refused before any decoding.
      if (!sandbox) enginesFor(services.engines.live.stt, candidates);
      const budget = await services.meter.lease(principal, 'stt', 'stt');
      let result: Awaited<ReturnType<typeof recognizeBatch>>;
      try {
        const decoded = await decodeRecording(audio);
        // The recording's length is known once decoded: one that would overdraw is refused unheard.
        budget.assertRoom(decoded.durationSeconds);
        result = sandbox
          ? await recognizeBatch(services.engines.sandbox.stt, decoded, plan, request.abortSignal)
          : await recognizeLive(services.engines.live.stt, decoded, plan, request.abortSignal);
      } catch (error) {
        budget.release();
        throw error;
      }
      await budget.commit({ mode: 'batch' }, result.durationSeconds);
      return reply.type('application/json; charset=utf-8').send({
        text: result.text,
        lang: result.lang,
        words: result.words,
        duration_s: result.durationSeconds,
      });
    },
  );
}
