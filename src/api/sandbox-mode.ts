import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/authenticate.js';
import { ApiError, type ErrorFamily } from './errors.js';

/** The only value `X-Speech-Sandbox-Mode` may carry (spec 5.9). */
const SANDBOX_MODE = 'synthetic';

/**
 * Checks `X-Speech-Sandbox-Mode`: still accepted with a sandbox key, refused with a live one
 * (spec 5.9, 7 rule 6). Both transports check it after authentication.
 * @throws ApiError `*.invalid_request` for another value, `tts.invalid_request` with a live key.
 */
export function checkSandboxMode(request: FastifyRequest, principal: Principal, family: ErrorFamily): void {
  const mode = request.headers['x-speech-sandbox-mode'];
  if (mode === undefined) return;
  if (mode !== SANDBOX_MODE) throw ApiError.of(family, 'invalid_request', `X-Speech-Sandbox-Mode accepts only "${SANDBOX_MODE}"`);
  if (principal.environment !== 'sandbox') {
    // The contract names this code for every endpoint (spec 5.9, 7 rule 6), not the route's family.
    throw new ApiError('tts.invalid_request', 'X-Speech-Sandbox-Mode: synthetic is only accepted with a sandbox key (sv_test_…); remove it for live traffic');
  }
}
