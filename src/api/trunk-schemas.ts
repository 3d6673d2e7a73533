/** The body of `GET /v1/trunks`: the SIP trunks and their registrations. */
import { Type, type Static } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const RegistrationSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('registering'), Type.Literal('registered'), Type.Literal('failed'), Type.Literal('unregistered')], {
      description:
        'registering: the first REGISTER is on its way; registered: bound (refreshed before expires_at); failed: the last attempt failed and no binding runs; unregistered: stopped',
    }),
    expires_at: Nullable(Type.String({ format: 'date-time', description: 'when the binding runs out, while registered' })),
    last_registered_at: Nullable(Type.String({ format: 'date-time' })),
    last_error: Nullable(Type.String({ description: 'the last failure (status and reason, or what went wrong), until a registration succeeds' })),
    failures: Type.Integer({ minimum: 0, description: 'failed attempts in a row' }),
    next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'when the next REGISTER goes' })),
  },
  { additionalProperties: false },
);

export const KeepAliveSchema = Type.Object(
  {
    reachable: Type.Union([Type.Boolean(), Type.Null()], { description: 'whether the last OPTIONS got any final answer; null before the first finding' }),
    last_checked_at: Nullable(Type.String({ format: 'date-time' })),
    round_trip_ms: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'request → answer of the last answered OPTIONS' }),
    last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'the status of that answer (any final status counts as reachable)' }),
    last_error: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const TrunkSchema = Type.Object(
  {
    name: Type.String(),
    registrar: Nullable(Type.String({ description: 'host:port' })),
    proxy: Nullable(Type.String({ description: 'host:port where requests to the trunk go' })),
    transport: Type.Union([Type.Literal('UDP'), Type.Literal('TCP'), Type.Literal('TLS')]),
    max_calls: Type.Integer({ minimum: 1 }),
    registration: Type.Union([RegistrationSchema, Type.Null()], { description: 'null for a trunk that does not register' }),
    keepalive: Type.Union([KeepAliveSchema, Type.Null()], {
      description: 'the OPTIONS keep-alive; null when it is off (options_interval_s: 0) or behind drachtio-server',
    }),
  },
  { additionalProperties: false },
);

export const TrunkListSchema = Type.Object(
  {
    sip: Type.Union([Type.Literal('embedded'), Type.Literal('drachtio'), Type.Literal('off')], {
      description:
        'who does the SIP: the embedded endpoint (which registers the trunks), drachtio-server (which registers itself), or nobody (SPRACHROHR_SIP=off)',
    }),
    trunks: Type.Array(TrunkSchema),
  },
  { additionalProperties: false },
);
export type TrunkList = Static<typeof TrunkListSchema>;
