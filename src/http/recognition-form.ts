/**
 * Reads the multipart form of `POST /v1/stt` as it streams in: one audio file part and the
 * text fields `lang` and `vocabulary`. An oversized upload is refused as soon as its size is
 * known; a form that is not well-formed multipart is refused with 400, never a 500.
 */
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { LIMITS } from '../catalog/limits.js';
import { ApiError } from '../api/errors.js';

/** Room for the form's boundaries and text fields beyond the audio itself. */
const FORM_OVERHEAD_BYTES = 256 * 1024;
const TEXT_FIELDS = new Set(['lang', 'vocabulary']);

/** The form's recording and text fields. */
export interface RecognitionForm {
  readonly audio: Buffer;
  readonly fields: Readonly<Record<string, string>>;
}

function audioTooLarge(request: FastifyRequest, detail: string): ApiError {
  // Stop parsing and discard (never buffer) what still arrives; the error answer closes a
  // connection whose body has not ended two seconds after it (api/error-handler.ts).
  request.raw.unpipe();
  request.raw.resume();
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
    file.once('error', (error: Error & { code?: string }) => (error.code === 'FST_REQ_FILE_TOO_LARGE' ? resolve('too-large') : reject(error)));
    file.once('end', finish);
    // A part destroyed without an error (the form ended inside it) has not arrived whole.
    file.once('close', () => (file.readableEnded ? finish() : reject(new Error('Unexpected end of form'))));
  });
}

/** What the multipart parser's own complaints mean for the client. */
function malformedForm(error: Error): ApiError {
  const message = error.message;
  let detail = 'the multipart form is not well-formed';
  if (/boundary not found/i.test(message)) detail = 'the Content-Type names no multipart boundary (multipart/form-data; boundary=…)';
  else if (/needle|boundary.*(long|length)/i.test(message)) detail = 'the multipart boundary is longer than 256 characters';
  else if (/unexpected end|terminated early|premature/i.test(message)) detail = 'the multipart form ends early: a part or the closing boundary is missing';
  else if (/malformed|header/i.test(message)) detail = 'a part of the multipart form has malformed headers';
  return new ApiError('stt.invalid_request', detail);
}

/**
 * Reads the form; `extraFields` are text fields accepted besides `lang` and `vocabulary`.
 * @throws ApiError `stt.audio_too_large` (413), `stt.invalid_request` (400) for a missing
 *   audio part, an unknown part or a malformed form, or what the body's reader was failed with
 *   (a body that arrives too slowly).
 */
export async function readRecognitionForm(request: FastifyRequest, extraFields: readonly string[] = []): Promise<RecognitionForm> {
  const accepted = new Set([...TEXT_FIELDS, ...extraFields]);
  const declared = Number(request.headers['content-length'] ?? NaN);
  if (declared > LIMITS.sttMaxUploadBytes + FORM_OVERHEAD_BYTES) {
    throw audioTooLarge(request, `the upload declares ${declared} bytes; audio is limited to 25 MB (${LIMITS.sttMaxUploadBytes} bytes)`);
  }
  if (!request.isMultipart()) throw new ApiError('stt.invalid_request', 'send multipart/form-data with the recording in a part named audio');
  let audio: Buffer | undefined;
  const fields: Record<string, string> = {};
  try {
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
        if (file === 'too-large') throw audioTooLarge(request, `the audio is larger than 25 MB (${LIMITS.sttMaxUploadBytes} bytes)`);
        audio = file;
      } else if (accepted.has(part.fieldname)) {
        fields[part.fieldname] = String(part.value);
      } else {
        throw new ApiError('stt.invalid_request', `unknown form field "${part.fieldname}"; accepted: audio, ${[...accepted].join(', ')}`);
      }
    }
  } catch (error) {
    // The parser's limits (FST_*) are mapped by the error handler; its other complaints are
    // plain errors about the client's form.
    if (error instanceof ApiError || (error as { code?: string }).code?.startsWith('FST_')) throw error;
    throw malformedForm(error as Error);
  }
  if (!audio) throw new ApiError('stt.invalid_request', 'the form has no file part named audio');
  return { audio, fields };
}
