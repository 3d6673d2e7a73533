/** The bodies of `/v1/calls`: an outbound call as ordered, and as reported. */
import { Type, type Static } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const CallOrderSchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 300, description: 'whom to call: an E.164 number (+41441234567; needs a trunk) or a SIP URI' }),
    from: Type.Optional(
      Type.String({ minLength: 1, maxLength: 300, description: "the caller ID: an E.164 number or a SIP URI (default: the trunk's caller_id or from_user)" }),
    ),
    trunk: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', description: 'the trunk of trunks.yaml to call through' })),
    dialplan: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$',
        description: 'a dialplan file of the dialplans folder (reminder or reminder.yaml) whose route runs once answered',
      }),
    ),
    route: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "the number of the file's route to run (default: its first)" })),
    bot: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: 'instead of a dialplan: one webhook or stream step, written as in a dialplan ({"stream": {"url": "wss://…"}}), run once answered',
        },
      ),
    ),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 20, description: "a bot call's language (default de-CH)" })),
    voice: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: "a bot call's voice (default anna)" })),
    variables: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,63}$' }), Type.String({ maxLength: 1000 }), {
        maxProperties: 50,
        description: "the route's {{variables}} (the call's own — caller, called, amd… — cannot be set)",
      }),
    ),
    ring_timeout_s: Type.Optional(Type.Integer({ minimum: 5, maximum: 180, description: 'how long it may ring before the call is cancelled (default 30)' })),
    machine_detection: Type.Optional(
      Type.Union([Type.Literal('off'), Type.Literal('detect'), Type.Literal('detect_message_end')], {
        description:
          'off (default); detect: human, machine or unknown from the first seconds, in {{amd}} before the route starts; detect_message_end: for a machine, the route starts after its beep (or the end of its greeting)',
      }),
    ),
    listen_early_media: Type.Optional(
      Type.Boolean({
        description:
          "start the route on the callee's early media (183 with SDP): its listen steps hear what the network plays before the answer, steps that speak wait for the answer (default false; not with machine_detection)",
      }),
    ),
    status_url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'where ringing, answered, completed and failed events are POSTed, signed like job callbacks' }),
    ),
  },
  { additionalProperties: false },
);

const AmdSchema = Type.Object(
  {
    result: Type.Union([Type.Literal('human'), Type.Literal('machine'), Type.Literal('unknown')]),
    reason: Type.String({ description: 'what decided it: short-greeting, long-greeting, beep, silence, max-time…' }),
    after_ms: Type.Integer({ minimum: 0, description: 'from the answer to the decision' }),
    message_end_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "detect_message_end: from the answer to the machine's beep or greeting end",
    }),
    beep: Type.Union([Type.Boolean(), Type.Null()], { description: 'whether a beep ended the greeting (null: not waited for)' }),
  },
  { additionalProperties: false },
);

export const CallSchema = Type.Object(
  {
    id: Type.String(),
    state: Type.Union([Type.Literal('queued'), Type.Literal('ringing'), Type.Literal('answered'), Type.Literal('completed'), Type.Literal('failed')]),
    to: Type.String(),
    from: Type.String({ description: 'the From the INVITE carried' }),
    trunk: Nullable(Type.String()),
    dialplan: Nullable(Type.String()),
    route: Nullable(Type.String()),
    bot: Type.Union([Type.Literal('webhook'), Type.Literal('stream'), Type.Null()]),
    sip_status: Type.Union([Type.Integer(), Type.Null()], { description: 'the final status of the INVITE (200 once answered)' }),
    cause: Type.Union(
      [
        Type.Literal('busy'),
        Type.Literal('declined'),
        Type.Literal('no_answer'),
        Type.Literal('unreachable'),
        Type.Literal('rejected'),
        Type.Literal('cancelled'),
        Type.Literal('media'),
        Type.Null(),
      ],
      { description: 'why a failed call failed: busy (486, 600), declined (603), no_answer, unreachable, rejected (another status), cancelled, media' },
    ),
    sip_call_id: Nullable(Type.String({ description: "the INVITE's Call-ID, once it is sent (the gateway's logs name the call by it)" })),
    early_media: Type.Boolean({ description: 'whether the callee sent early media (183 with SDP)' }),
    amd: Type.Union([AmdSchema, Type.Null()]),
    ended_by: Type.Union([Type.Literal('callee'), Type.Literal('gateway'), Type.Literal('api'), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    ringing_at: Nullable(Type.String({ format: 'date-time' })),
    answered_at: Nullable(Type.String({ format: 'date-time' })),
    ended_at: Nullable(Type.String({ format: 'date-time' })),
    duration_s: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'from the answer to the end (to now while up)' }),
  },
  { additionalProperties: false },
);

export const CallListSchema = Type.Object({ calls: Type.Array(CallSchema) }, { additionalProperties: false });

export const CallListQuerySchema = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'how many calls, newest first (default 50)' })) },
  { additionalProperties: false },
);

export type CallOrderBody = Static<typeof CallOrderSchema>;
export type CallBody = Static<typeof CallSchema>;
export type CallList = Static<typeof CallListSchema>;
export type CallListQuery = Static<typeof CallListQuerySchema>;
