import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import {
  ErrorBodySchema,
  PREWARM_FIELD_ERRORS,
  PREWARM_MAX_PHRASES,
  PrewarmRequestSchema,
  PrewarmResultSchema,
  type PrewarmRequestBody,
  type PrewarmResult,
} from '../../api/schemas.js';
import { LIMITS } from '../../catalog/limits.js';
import { planSynthesis } from '../../speech/synthesis-request.js';

/**
 * Largest JSON body of a prewarm request: every phrase at the text limit in 4-byte UTF-8
 * characters, plus the other fields.
 */
const PREWARM_BODY_LIMIT = PREWARM_MAX_PHRASES * LIMITS.ttsMaxTextCharacters * 4 + 64 * 1024;

/** Phrases checked between turns of the event loop: 200 markup phrases at the limit take ~0.2 s in all. */
const PHRASES_PER_TURN = 16;

/**
 * Checks every phrase as the text of a synthesis with the request's fields, so that a phrase
 * fails with the code `POST /v1/tts` would give it; the detail says which phrase. Gives the
 * event loop back now and then, so that a large request does not hold up realtime traffic.
 * @throws ApiError of the first phrase at fault.
 */
async function checkPhrases(body: PrewarmRequestBody, signal: AbortSignal): Promise<void> {
  const { phrases, ...fields } = body;
  for (const [index, text] of phrases.entries()) {
    if (index > 0 && index % PHRASES_PER_TURN === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      signal.throwIfAborted();
    }
    try {
      planSynthesis({ ...fields, text }, false);
    } catch (error) {
      if (error instanceof ApiError) throw new ApiError(error.code, `phrases[${index}]: ${error.detail ?? error.message}`);
      throw error;
    }
  }
}

/**
 * `POST /v1/tts/prewarm` (spec 4.4, 2.10). This deployment keeps no synthesis cache (spec 1:
 * identical texts are synthesised again each time), so there is nothing to warm: the request
 * is checked exactly like a synthesis, and every phrase is answered `skipped`; nothing is
 * synthesised, metered or billed.
 */
export function registerPrewarmRoutes(app: FastifyInstance): void {
  app.post<{ Body: PrewarmRequestBody }>(
    '/v1/tts/prewarm',
    {
      bodyLimit: PREWARM_BODY_LIMIT,
      config: { sprachrohr: { family: 'tts' }, fieldErrors: PREWARM_FIELD_ERRORS },
      // Needs a live key (spec 4.4): a sandbox key is told so before its body is checked,
      // since no body would be accepted from it.
      preValidation: async (request) => {
        if (request.principal?.environment === 'sandbox') {
          throw new ApiError(
            'tts.invalid_request',
            'prewarm needs a live key (sv_…); sandbox keys (sv_test_…) never reach a speech engine, so there is nothing to warm for them. Call POST /v1/tts directly.',
          );
        }
      },
      schema: {
        summary: 'Prewarm phrases (no effect on this deployment)',
        description:
          'Checks the phrases exactly like synthesis requests with the given model, voice, language, dialect, speed and style, and answers ' +
          'per phrase. This deployment keeps no synthesis cache (identical texts are synthesised again each time), so every phrase ' +
          'comes back skipped: nothing is synthesised, nothing is metered and nothing is billed (billed_seconds and free_seconds are 0). ' +
          `Needs a live key; a sandbox key is refused with 400 tts.invalid_request. 1 to ${PREWARM_MAX_PHRASES} phrases, each at most ` +
          `${LIMITS.ttsMaxTextCharacters} characters.`,
        tags: ['text-to-speech'],
        body: PrewarmRequestSchema,
        response: {
          200: {
            description: 'What became of each phrase: on this deployment every phrase is skipped, with 0 seconds billed.',
            content: { 'application/json': { schema: PrewarmResultSchema } },
          },
          '4xx': ErrorBodySchema,
          '5xx': ErrorBodySchema,
        },
      },
    },
    async (request): Promise<PrewarmResult> => {
      await checkPhrases(request.body, request.abortSignal);
      const phrases = request.body.phrases.map((_, index) => ({ index, status: 'skipped' as const, audio_seconds: 0 }));
      return {
        request_id: request.id,
        warmed: 0,
        already_warm: 0,
        failed: 0,
        skipped: phrases.length,
        billed_seconds: 0,
        free_seconds: 0,
        phrases,
      };
    },
  );
}
