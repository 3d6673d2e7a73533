/**
 * The dialplan format (`dialplans/*.yaml`): routes by called number, each a list of steps
 * (prompt-step-schemas.ts: say, listen, menu, gather, record; flow-step-schemas.ts: answer,
 * hangup, goto, set, branch, hours, language, transfer; bot-step-schemas.ts: webhook, stream). The JSON Schema here is what the
 * loader checks every file against.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';
import { AnswerStep, BranchStep, GotoStep, HangupStep, HoursStep, LanguageStep, SetStep, TransferStep } from './flow-step-schemas.js';
import { GatherStep, ListenStep, MenuStep, RecordStep, SayStep } from './prompt-step-schemas.js';
import { StreamStep, WebhookStep } from './bot-step-schemas.js';

/** Every step kind's schema; the loader checks a step against the one its key names. */
export const STEP_SCHEMAS = {
  answer: AnswerStep,
  say: SayStep,
  listen: ListenStep,
  menu: MenuStep,
  gather: GatherStep,
  record: RecordStep,
  hangup: HangupStep,
  goto: GotoStep,
  set: SetStep,
  branch: BranchStep,
  hours: HoursStep,
  language: LanguageStep,
  transfer: TransferStep,
  webhook: WebhookStep,
  stream: StreamStep,
} as const;

export const DialplanStepSchema = Type.Union([
  AnswerStep,
  SayStep,
  ListenStep,
  MenuStep,
  GatherStep,
  RecordStep,
  HangupStep,
  GotoStep,
  SetStep,
  BranchStep,
  HoursStep,
  LanguageStep,
  TransferStep,
  WebhookStep,
  StreamStep,
]);

export const DialplanRouteSchema = Type.Object(
  {
    number: Type.String({ pattern: '^(\\*|\\+?[0-9A-Za-z._-]+\\*?)$', description: 'called number: exact, a prefix ending in *, or * for any' }),
    trunk: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9][a-z0-9_-]{0,39}$',
        description: 'only calls that come from this trunk (trunks.yaml, its allow addresses); a route naming the trunk goes before one that does not',
      }),
    ),
    engines: Type.Optional(
      Type.Union([Type.Literal('live'), Type.Literal('synthetic')], {
        description: `live engines, or the synthetic ones (load tests) (default ${D.route.engines})`,
      }),
    ),
    language: Type.String({ minLength: 2 }),
    voice: Type.String({ minLength: 1 }),
    dialect: Type.Optional(Type.String({ minLength: 1 })),
    dialect_text: Type.Optional(
      Type.Boolean({
        description: "the route's prompts are written in the Swiss German dialect already: pronounced, not rendered (de-CH only; default false)",
      }),
    ),
    max_turns: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description: `how often a step may send the call back to an earlier step in one call (default ${D.route.max_turns})`,
      }),
    ),
    steps: Type.Array(DialplanStepSchema, { minItems: 1, maxItems: 200 }),
  },
  { additionalProperties: false },
);

export const DialplanFileSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    account: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9][a-z0-9._-]{0,62}$',
        description:
          "the account (sprachrohr accounts) whose entitlements this file's calls draw from and whose usage they count in (default: the default account)",
      }),
    ),
    webhook_secret_env: Type.Optional(
      Type.String({
        pattern: '^[A-Z_][A-Z0-9_]*$',
        description:
          "the name of the environment variable holding this file's webhook secret (≥ 32 characters), which signs its bots' requests instead of SPRACHROHR_WEBHOOK_SECRET; the value never goes in the file",
      }),
    ),
    routes: Type.Array(DialplanRouteSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type DialplanStep = Static<typeof DialplanStepSchema>;
export type DialplanRoute = Static<typeof DialplanRouteSchema>;
export type DialplanFile = Static<typeof DialplanFileSchema>;
