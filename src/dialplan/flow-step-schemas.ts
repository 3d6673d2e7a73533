/**
 * The schema of the steps that steer the call rather than talk: `answer`, `hangup`, `goto`,
 * `set`, `branch`, `hours`, `language` and `transfer`. Defaults come from {@link DIALPLAN_DEFAULTS}.
 */
import { Type } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';
import { OpeningHoursSchema } from './opening-hours-schema.js';
import { PromptText, StepTarget } from './prompt-step-schemas.js';

const id = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the name goto and other steps use for this step' }));
/** A variable name a dialplan may set. */
export const VARIABLE_NAME = '^[a-z_][a-z0-9_]*$';

/** A transfer target: a SIP URI or a number, or text with placeholders that must become one. */
export const TRANSFER_TARGET = '^(sips?:\\S+|\\+?[0-9*#]+|\\S*\\{\\{\\s*\\w+\\s*\\}\\}\\S*)$';

export const AnswerStep = Type.Object({ id, answer: Type.Object({}, { additionalProperties: false }) }, { additionalProperties: false });

export const HangupStep = Type.Object(
  {
    id,
    hangup: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'why, for the log and the BYE (Reason header)' })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const GotoStep = Type.Object({ id, goto: StepTarget('the id of the step to go on from') }, { additionalProperties: false });

export const SetStep = Type.Object(
  {
    id,
    set: Type.Record(Type.String({ pattern: VARIABLE_NAME }), Type.String({ maxLength: 1000 }), {
      minProperties: 1,
      additionalProperties: false,
      description: 'variables to set, name: value; values may use {{variable}} placeholders',
    }),
  },
  { additionalProperties: false },
);

/** A test of one variable: a string is "equals". */
const Test = Type.Union([
  Type.String({ description: 'the value equals this' }),
  Type.Object(
    {
      equals: Type.Optional(Type.String()),
      not: Type.Optional(Type.String({ description: 'the value is not this' })),
      contains: Type.Optional(Type.String({ minLength: 1, description: 'the value contains this word or phrase (case and accents ignored)' })),
      matches: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a regular expression the value matches' })),
      in: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'the value is one of these' })),
      empty: Type.Optional(Type.Boolean({ description: 'the value is empty (true) or not (false)' })),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
]);

export const BranchCase = Type.Object(
  {
    if: Type.Optional(
      Type.Record(Type.String({ pattern: VARIABLE_NAME }), Test, {
        minProperties: 1,
        additionalProperties: false,
        description: 'variable: test; every test must hold (heard, digits, caller, called, language, hours, anything set)',
      }),
    ),
    goto: StepTarget('where the call goes when the tests hold (a case without if always holds)'),
  },
  { additionalProperties: false },
);

export const BranchStep = Type.Object(
  { id, branch: Type.Array(BranchCase, { minItems: 1, maxItems: 50, description: 'cases tried in order; none holding goes on with the next step' }) },
  { additionalProperties: false },
);

export const HoursStep = Type.Object(
  {
    id,
    hours: Type.Object(
      {
        ...OpeningHoursSchema.properties,
        open: Type.Optional(StepTarget('where the call goes while open (default: the next step)')),
        closed: Type.Optional(StepTarget('where the call goes while closed (default: the next step)')),
        holiday: Type.Optional(StepTarget('where the call goes on a public holiday (default: as closed)')),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const LanguageStep = Type.Object(
  {
    id,
    language: Type.Object(
      {
        language: Type.String({ minLength: 2, description: 'the language the call goes on in (prompts and listening)' }),
        voice: Type.Optional(Type.String({ minLength: 1, description: "catalog voice id (default: the call's voice)" })),
        dialect: Type.Optional(Type.String({ minLength: 1, description: 'dialect id of the language (default: its standard)' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const TransferStep = Type.Object(
  {
    id,
    transfer: Type.Object(
      {
        to: Type.String({
          minLength: 1,
          maxLength: 300,
          pattern: TRANSFER_TARGET,
          description: 'a SIP URI, or a number (sent to where the call came from); {{variable}} placeholders are filled in',
        }),
        mode: Type.Optional(
          Type.Union([Type.Literal('auto'), Type.Literal('refer'), Type.Literal('bridge')], {
            description: `refer (blind, RFC 3515), bridge (the gateway calls and joins the media), auto: refer, then bridge when refused (default ${D.transfer.mode})`,
          }),
        ),
        trunk: Type.Optional(
          Type.String({
            pattern: '^[a-z0-9][a-z0-9_-]{0,39}$',
            description:
              "a bridged call through this trunk of trunks.yaml: a number goes to the trunk's proxy, the Caller ID is the trunk's, and its credentials answer the carrier's challenge",
          }),
        ),
        caller_id: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 100,
            description: "the From of a bridged call: a number or SIP URI (default: the caller's, or the trunk's caller_id)",
          }),
        ),
        diversion: Type.Optional(Type.Boolean({ description: 'a Diversion header (RFC 5806) naming the called number (default false)' })),
        headers: Type.Optional(
          Type.Record(Type.String({ pattern: '^X-[A-Za-z0-9-]+$' }), Type.String({ maxLength: 200, pattern: '^[^\\r\\n]*$' }), {
            maxProperties: 10,
            additionalProperties: false,
            description: 'custom X- headers on the REFER or the bridged INVITE; values may use {{variable}} placeholders',
          }),
        ),
        ring_timeout_s: Type.Optional(
          Type.Integer({
            minimum: 5,
            maximum: 120,
            description: `how long the target may ring before it counts as no answer (default ${D.transfer.ring_timeout_s})`,
          }),
        ),
        waiting: Type.Optional(
          Type.Union([Type.Literal('ringback'), PromptText('said (and repeated) while the target rings')], {
            description: `what the caller hears while a bridged call rings: ringback or a text (default ${D.transfer.waiting})`,
          }),
        ),
        on_fail: Type.Optional(StepTarget('the step to go on from when the transfer fails (default: the next step)')),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
