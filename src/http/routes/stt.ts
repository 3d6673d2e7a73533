import type { FastifyInstance } from 'fastify';
import { parseLanguageCandidates, parseVocabulary } from '../../speech/recognition-request.js';
import { enginesFor, recognizeLive } from '../../speech/live-recognition.js';
import { decodeRecording, recognizeBatch } from '../../speech/recognition-service.js';
import { readRecognitionForm } from '../recognition-form.js';
import { ErrorBodySchema, RecognitionFormSchema, TranscriptSchema } from '../../api/schemas.js';
import { takeRequestSlot } from '../../api/request-context.js';
import type { AppServices } from '../../api/services.js';

/** `POST /v1/stt`: batch recognition of an uploaded recording (spec 4.5). */
export function registerSttRoutes(app: FastifyInstance, services: AppServices): void {
  app.post(
    '/v1/stt',
    {
      // The upload is read by the handler, which takes the in-flight slot once it has arrived.
      config: { sprachrohr: { family: 'stt', bodyInHandler: true } },
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
      const { audio, fields } = await readRecognitionForm(request);
      await takeRequestSlot(request, reply, services.admission);
      const candidates = parseLanguageCandidates(fields['lang']);
      const vocabulary = parseVocabulary(fields['vocabulary']);
      const plan = { candidates, vocabulary };
      const sandbox = principal.environment === 'sandbox';
      // A language no installed recogniser serves is refused before any decoding.
      if (!sandbox) enginesFor(services.engines.live.stt, candidates);
      const budget = await services.meter.lease(principal, 'stt', 'stt', request.id);
      let result: Awaited<ReturnType<typeof recognizeBatch>>;
      try {
        const decoded = await decodeRecording(audio);
        // The recording's length is known once decoded: one that would overdraw is refused unheard.
        await budget.ensureRoom(decoded.durationSeconds);
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
