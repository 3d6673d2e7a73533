import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../api/errors.js';
import { CallListQuerySchema, CallListSchema, CallOrderSchema, CallSchema, type CallListQuery, type CallOrderBody } from '../../api/call-schemas.js';
import { ErrorBodySchema } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';
import { CallOrderError, type CallOrder } from '../../telephony/outbound/call-order.js';
import type { OutboundDialer } from '../../telephony/outbound/outbound-dialer.js';
import { placedCallView } from '../../telephony/outbound/placed-call-record.js';
import { queryValidator } from './query-validator.js';

const errors = { '4xx': ErrorBodySchema, '5xx': ErrorBodySchema };
const settings = { sprachrohr: { family: 'stt' as const } };
const IdParamsSchema = Type.Object({ id: Type.String({ maxLength: 200, description: 'A call id (call_…).' }) });

/** Calls are real telephony on a deployment's carrier accounts: sandbox keys, which must never reach it, are refused. */
async function requireLiveKey(request: FastifyRequest): Promise<void> {
  if (request.principal?.environment === 'live') return;
  throw new ApiError('stt.forbidden', 'calls are real telephony and need a live key (sv_…); sandbox keys (sv_test_…) cannot place or see them');
}

/** The dialer, or 409 while calls are off. */
function dialerOf(services: AppServices): OutboundDialer {
  const dialer = services.telephony.dialer;
  if (!dialer) throw new ApiError('stt.call_unavailable', 'calls are off on this gateway (SPRACHROHR_SIP=off)');
  return dialer;
}

/** A refused order as the API's error. */
function orderError(error: CallOrderError): ApiError {
  switch (error.problem) {
    case 'invalid':
      return new ApiError('stt.invalid_request', error.message);
    case 'unavailable':
      return new ApiError('stt.call_unavailable', error.message);
    case 'key_limit':
      return new ApiError('stt.rate_limited', error.message, { retryAfterSeconds: error.retryAfterSeconds ?? 1 });
    case 'capacity':
      return new ApiError('stt.capacity', error.message, { retryAfterSeconds: error.retryAfterSeconds ?? 5 });
  }
}

const notFound = (id: string): ApiError =>
  new ApiError('stt.not_found', `this key's account has no call ${JSON.stringify(id)} (calls are kept an hour after they end, 10,000 per account at most)`);

/** `POST /v1/calls`, `GET /v1/calls`, `GET /v1/calls/{id}` and `DELETE /v1/calls/{id}`: outbound calls. */
export function registerCallRoutes(app: FastifyInstance, services: AppServices): void {
  app.post<{ Body: CallOrderBody }>(
    '/v1/calls',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: {
        summary: 'Place an outbound call',
        description:
          'Calls `to` (an E.164 number through a trunk of trunks.yaml, or a SIP URI) and, once answered, runs a dialplan route or a bot. ' +
          'Answers 201 at once with the call (state queued); follow it with GET /v1/calls/{id} or a signed status_url. ' +
          '400 stt.invalid_request names what is wrong (number, trunk, dialplan, route, bot, URL); 409 stt.call_unavailable when calls are off or ' +
          'the trunk is down; 429 stt.rate_limited over the key’s calls per second or at once, 429 stt.capacity when the trunk is at max_calls ' +
          '(both with Retry-After). Live keys only; the call is metered as realtime use of the key’s account.',
        tags: ['telephony'],
        body: CallOrderSchema,
        response: { 201: CallSchema, ...errors },
      },
    },
    async (request, reply) => {
      const dialer = dialerOf(services);
      const principal = request.principal!;
      let record;
      try {
        record = await dialer.place(request.body as CallOrder, { keyId: principal.keyId, accountId: principal.accountId });
      } catch (error) {
        throw error instanceof CallOrderError ? orderError(error) : error;
      }
      return reply.code(201).header('Location', `/v1/calls/${record.id}`).send(placedCallView(record));
    },
  );

  app.get<{ Querystring: CallListQuery }>(
    '/v1/calls',
    {
      config: settings,
      onRequest: requireLiveKey,
      validatorCompiler: queryValidator,
      schema: {
        summary: "The account's calls: live ones and those of the last hour, newest first",
        tags: ['telephony'],
        querystring: CallListQuerySchema,
        response: { 200: CallListSchema, ...errors },
      },
    },
    async (request) => {
      const dialer = dialerOf(services);
      return { calls: dialer.list(request.principal!.accountId, request.query.limit ?? 50).map((record) => placedCallView(record)) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/calls/:id',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: {
        summary: 'One call: its state, SIP cause, machine detection and times',
        tags: ['telephony'],
        params: IdParamsSchema,
        response: { 200: CallSchema, ...errors },
      },
    },
    async (request) => {
      const record = dialerOf(services).get(request.principal!.accountId, request.params.id);
      if (!record) throw notFound(request.params.id);
      return placedCallView(record);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/calls/:id',
    {
      config: settings,
      onRequest: requireLiveKey,
      schema: {
        summary: 'Hang up a call',
        description:
          'Cancels a call that still rings (CANCEL), hangs up one that is answered (BYE), and answers with the call once it is over (or after 3 s); a call that is over already is answered as it is.',
        tags: ['telephony'],
        params: IdParamsSchema,
        response: { 200: CallSchema, ...errors },
      },
    },
    async (request) => {
      const record = await dialerOf(services).hangup(request.principal!.accountId, request.params.id);
      if (!record) throw notFound(request.params.id);
      return placedCallView(record);
    },
  );
}
