import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ErrorBodySchema } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';
import { TrunkListSchema, type TrunkList } from '../../api/trunk-schemas.js';

/** Trunks carry a deployment's carrier accounts: sandbox keys, which must never reach real telephony, are refused. */
async function requireLiveKey(request: FastifyRequest): Promise<void> {
  if (request.principal?.environment === 'live') return;
  throw new ApiError('stt.forbidden', 'trunks are real telephony and need a live key (sv_…); sandbox keys (sv_test_…) cannot see them');
}

/** `GET /v1/trunks`: the SIP trunks of the trunk file and where their registrations stand. */
export function registerTrunkRoutes(app: FastifyInstance, services: AppServices): void {
  app.get(
    '/v1/trunks',
    {
      config: { sprachrohr: { family: 'stt' } },
      onRequest: requireLiveKey,
      schema: {
        summary: 'SIP trunks and their registrations',
        description:
          'The trunks of trunks.yaml beside the dialplans (reloaded when it changes), each with its registration: state, when the binding ' +
          'runs out, the last error and when the next REGISTER goes. Credentials are never shown. Live keys only.',
        tags: ['telephony'],
        response: { 200: TrunkListSchema, '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
      },
    },
    async (): Promise<TrunkList> => {
      const { sip, trunks } = services.telephony.trunks();
      return {
        sip,
        trunks: trunks.map((trunk) => ({
          name: trunk.name,
          registrar: trunk.registrar,
          proxy: trunk.proxy,
          transport: trunk.transport as 'UDP' | 'TCP' | 'TLS',
          max_calls: trunk.maxCalls,
          registration: trunk.registration && {
            state: trunk.registration.state,
            expires_at: trunk.registration.expiresAt,
            last_registered_at: trunk.registration.lastRegisteredAt,
            last_error: trunk.registration.lastError,
            failures: trunk.registration.failures,
            next_attempt_at: trunk.registration.nextAttemptAt,
          },
          keepalive: trunk.keepalive && {
            reachable: trunk.keepalive.reachable,
            last_checked_at: trunk.keepalive.lastCheckedAt,
            round_trip_ms: trunk.keepalive.roundTripMs,
            last_status: trunk.keepalive.lastStatus,
            last_error: trunk.keepalive.lastError,
          },
        })),
      };
    },
  );
}
