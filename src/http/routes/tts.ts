import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { LIMITS } from '../../catalog/limits.js';
import { shortestSpeechSeconds, synthesisClaimSeconds } from '../../speech/speech-length.js';
import { audioTooLong, planSynthesis } from '../../speech/synthesis-request.js';
import { synthesizeBatch, type SynthesisOutcome } from '../../speech/synthesis-service.js';
import { ErrorBodySchema, SYNTHESIS_FIELD_ERRORS, SynthesisRequestSchema, SynthesisResultSchema, type SynthesisRequestBody } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';

/** Largest JSON body of a synthesis request: 8000 characters of up to 4 UTF-8 bytes, plus fields. */
const SYNTHESIS_BODY_LIMIT = 64 * 1024;

function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((part) => part.trim().split(';')[0]?.trim().toLowerCase() === 'application/json');
}

/** `POST /v1/tts`: batch synthesis (spec 4.1). */
export function registerTtsRoutes(app: FastifyInstance, services: AppServices): void {
  app.post<{ Body: SynthesisRequestBody }>(
    '/v1/tts',
    {
      bodyLimit: SYNTHESIS_BODY_LIMIT,
      config: { sprachrohr: { family: 'tts' }, fieldErrors: SYNTHESIS_FIELD_ERRORS },
      schema: {
        summary: 'Synthesise speech (batch)',
        description:
          'Returns the audio as raw bytes with metadata headers, or with output=json / Accept: application/json a SynthesisResult with base64 audio.',
        tags: ['text-to-speech'],
        body: SynthesisRequestSchema,
        response: {
          200: {
            description: 'Audio bytes in the requested format, or the JSON envelope.',
            content: {
              'application/json': { schema: SynthesisResultSchema },
              'audio/mpeg': { schema: { type: 'string', format: 'binary' } },
              'audio/wav': { schema: { type: 'string', format: 'binary' } },
              'audio/ogg; codecs=opus': { schema: { type: 'string', format: 'binary' } },
              'audio/pcm': { schema: { type: 'string', format: 'binary' } },
              'audio/basic': { schema: { type: 'string', format: 'binary' } },
              'audio/x-alaw-basic': { schema: { type: 'string', format: 'binary' } },
            },
          },
          '4xx': ErrorBodySchema,
          '5xx': ErrorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const plan = planSynthesis(request.body, wantsJson(request.headers.accept));
      const engine = principal.environment === 'sandbox' ? services.engines.sandbox.tts : services.engines.ttsFor(plan.model, plan.voice, plan.speech.document);
      if (!engine) {
        throw new ApiError('tts.unavailable', 'no speech synthesis engine is running on this deployment yet; sandbox keys (sv_test_…) work');
      }
      const budget = await services.meter.lease(principal, 'tts', 'tts', request.id);
      let outcome: SynthesisOutcome;
      try {
        // Refused before any synthesis when even the shortest reading would overdraw the budget
        // (with a shared store, room for a slow reading is claimed first).
        await budget.ensureRoom(shortestSpeechSeconds(plan.speech.document, plan.speed), synthesisClaimSeconds(plan.speech.document, plan.speed));
        outcome = await synthesizeBatch({ engine, dialect: services.engines.dialect }, plan, request.abortSignal, (seconds) => {
          if (seconds > LIMITS.ttsMaxAudioSeconds) throw audioTooLong(`more than ${LIMITS.ttsMaxAudioSeconds} s`);
          budget.drawTo(seconds);
        });
      } catch (error) {
        budget.release();
        throw error;
      }
      services.stats.syntheses++;
      const duration = Math.round(outcome.durationSeconds * 1000) / 1000;
      reply
        .header('X-Speech-Audio-Duration', duration.toFixed(3))
        .header('X-Speech-Audio-Encoding', plan.format.id)
        .header('X-Speech-Audio-Sample-Rate', String(plan.sampleRateHz))
        .header('X-Speech-Characters', String(plan.speech.characters))
        .header('X-Speech-Passages', String(plan.speech.passages))
        .header('X-Speech-Voice', plan.voice)
        .header('X-Speech-Language', plan.language)
        .header('X-Speech-Cache', 'miss');
      if (plan.dialect) reply.header('X-Speech-Dialect', plan.dialect);
      const audio = {
        encoding: plan.format.id,
        media_type: outcome.mediaType,
        sample_rate_hz: plan.sampleRateHz,
        channels: 1,
        duration_seconds: duration,
        byte_length: outcome.audio.length,
      };
      // The body is complete before the work is billed: a response that cannot be made is not.
      const body =
        plan.output === 'json'
          ? JSON.stringify({
              request_id: request.id,
              voice: plan.voice,
              language: plan.language,
              dialect: plan.dialect,
              speed: plan.speed,
              characters: plan.speech.characters,
              passages: plan.speech.passages,
              cache: 'miss',
              ...(plan.speech.markNames.length > 0 ? { marks: outcome.marks } : {}),
              audio: { ...audio, data: outcome.audio.toString('base64') },
            })
          : outcome.audio;
      await budget.commit({ mode: 'batch' }, outcome.durationSeconds);
      if (typeof body === 'string') return reply.type('application/json; charset=utf-8').send(body);
      return reply.type(outcome.mediaType).header('Content-Length', String(body.length)).send(body);
    },
  );
}
