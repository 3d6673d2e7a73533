/**
 * Schemas of `GET /v1/usage` (spec 2.9, 4.12): the query and the report, as fastify validates
 * them and the OpenAPI document shows them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './schemas.js';

/** The query of `GET /v1/usage`. */
export const UsageQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'Start, inclusive: a date (2026-11-01, midnight UTC) or a date-time with offset. Default: the start of the current month (UTC).',
      }),
    ),
    to: Type.Optional(
      Type.String({ maxLength: 40, description: 'End: a date (the whole of that day, UTC) or a date-time with offset (exclusive). Default: now.' }),
    ),
    granularity: Type.Optional(StringEnum(['total', 'day'] as const, { default: 'total', description: 'day adds window.days, a breakdown per UTC day.' })),
  },
  { additionalProperties: false },
);

/** A validated usage query. */
export type UsageQuery = Static<typeof UsageQuerySchema>;

const BreakdownLineSchema = Type.Object({
  direction: StringEnum(['tts', 'stt'] as const),
  mode: StringEnum(['batch', 'realtime'] as const),
  requests: Type.Integer({ minimum: 0 }),
  billable_seconds: Type.Integer({ minimum: 0, description: 'The line’s audio rounded up to the whole second; no minimum per request.' }),
  audio_seconds: Type.Number({ minimum: 0, description: 'Audio to the millisecond.' }),
  cached_seconds: Type.Number({ minimum: 0, maximum: 0, description: 'Always 0: no audio is cached.' }),
});

const SandboxSchema = Type.Object({
  requests: Type.Integer({ minimum: 0 }),
  audio_seconds: Type.Number({ minimum: 0 }),
  billed: Type.Boolean({ description: 'Always false: sandbox traffic is never billed.' }),
});

const DaySchema = Type.Object({
  date: Type.String({ format: 'date' }),
  total_billable_seconds: Type.Integer({ minimum: 0 }),
  breakdown: Type.Array(BreakdownLineSchema),
  sandbox: SandboxSchema,
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const EntitlementCommon = {
  id: Type.Integer(),
  kind: StringEnum(['evaluation', 'committed', 'credit'] as const),
  direction: StringEnum(['tts', 'stt', 'any'] as const),
  valid_until: Nullable(Type.String({ format: 'date-time', description: 'Null: no end.' })),
  enforcement: StringEnum(['hard', 'soft'] as const),
};

/** An entitlement in seconds (evaluation, committed) or in credits (credit), spec 2.9. */
export const EntitlementViewSchema = Type.Union(
  [
    Type.Object({
      ...EntitlementCommon,
      granted_seconds: Type.Number({ minimum: 0 }),
      used_seconds: Nullable(Type.Number({ minimum: 0 })),
      remaining_seconds: Nullable(Type.Number({ minimum: 0 })),
    }),
    Type.Object({
      ...EntitlementCommon,
      unit: StringEnum(['credits'] as const),
      granted_credits: Type.Number({ minimum: 0 }),
      used_credits: Nullable(Type.Number({ minimum: 0 })),
      remaining_credits: Nullable(Type.Number({ minimum: 0 })),
      used_percent: Nullable(Type.Number({ minimum: 0, maximum: 100 })),
    }),
  ],
  { $id: 'Entitlement' },
);

/** The body of `GET /v1/usage` (spec 2.9). */
export const UsageReportSchema = Type.Object(
  {
    request_id: Type.String(),
    unit: Type.String({ description: 'audio_seconds' }),
    granularity: Type.String({ description: 'What the meter counts in: second.' }),
    minimum_billable_unit: Nullable(Type.Number({ description: 'Null: no minimum per request.' })),
    window: Type.Object({
      from: Type.String({ format: 'date-time' }),
      to: Type.String({ format: 'date-time' }),
      total_billable_seconds: Type.Integer({ minimum: 0 }),
      breakdown: Type.Array(BreakdownLineSchema),
      sandbox: SandboxSchema,
      days: Type.Optional(Type.Array(DaySchema, { description: 'With granularity=day: every UTC day the window touches.' })),
    }),
    entitlements: Type.Array(EntitlementViewSchema),
  },
  { $id: 'Usage' },
);
