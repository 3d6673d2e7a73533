/**
 * The dialplan format (`dialplans/*.yaml`): routes by called number, each a list of steps —
 * `answer`, `say`, `listen`, `hangup`, and `goto` to repeat from a step with an `id`. The
 * JSON Schema here is what the loader checks every file against at start.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';

const Voice = {
  voice: Type.Optional(Type.String({ minLength: 1, description: 'catalog voice id (default: the route voice)' })),
  language: Type.Optional(Type.String({ minLength: 2, description: 'language code (default: the route language)' })),
  dialect: Type.Optional(Type.String({ minLength: 1, description: 'dialect id of the language' })),
};

const AnswerStep = Type.Object({ id: Type.Optional(Type.String()), answer: Type.Object({}, { additionalProperties: false }) }, { additionalProperties: false });

const SayStep = Type.Object(
  {
    id: Type.Optional(Type.String()),
    say: Type.Object(
      {
        text: Type.String({
          minLength: 1,
          maxLength: 5000,
          description: 'plain text or a <speak> document; {{heard}}, {{digits}}, {{caller}}, {{called}} are filled in',
        }),
        ...Voice,
        barge_in: Type.Optional(Type.Boolean({ description: `caller speech or a key stops the prompt (default ${D.say.barge_in})` })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const ListenStep = Type.Object(
  {
    id: Type.Optional(Type.String()),
    listen: Type.Object(
      {
        speech: Type.Optional(Type.Boolean({ description: `listen for speech (default ${D.listen.speech})` })),
        dtmf: Type.Optional(Type.Boolean({ description: `listen for keys (default ${D.listen.dtmf})` })),
        language: Type.Optional(Type.String({ minLength: 2 })),
        vocabulary: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 200 })),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 500, maximum: 60_000, description: `no speech or key for this long ends the step (default ${D.listen.timeout_ms})` }),
        ),
        max_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 120_000, description: `the longest the step listens (default ${D.listen.max_ms})` })),
        max_digits: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, description: `keys that end the step (default ${D.listen.max_digits})` })),
        end_silence_ms: Type.Optional(
          Type.Integer({ minimum: 100, maximum: 5000, description: `silence after speech that ends the caller's turn (default ${D.listen.end_silence_ms})` }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const HangupStep = Type.Object({ id: Type.Optional(Type.String()), hangup: Type.Object({}, { additionalProperties: false }) }, { additionalProperties: false });

const GotoStep = Type.Object(
  { id: Type.Optional(Type.String()), goto: Type.String({ minLength: 1, description: 'the id of the step to go on from' }) },
  { additionalProperties: false },
);

export const DialplanStepSchema = Type.Union([AnswerStep, SayStep, ListenStep, HangupStep, GotoStep]);

export const DialplanRouteSchema = Type.Object(
  {
    number: Type.String({ pattern: '^(\\*|\\+?[0-9A-Za-z._-]+\\*?)$', description: 'called number: exact, a prefix ending in *, or * for any' }),
    engines: Type.Optional(
      Type.Union([Type.Literal('live'), Type.Literal('synthetic')], {
        description: `live engines, or the synthetic ones (load tests) (default ${D.route.engines})`,
      }),
    ),
    language: Type.String({ minLength: 2 }),
    voice: Type.String({ minLength: 1 }),
    dialect: Type.Optional(Type.String({ minLength: 1 })),
    max_turns: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: `how often goto may jump back in one call (default ${D.route.max_turns})` }),
    ),
    steps: Type.Array(DialplanStepSchema, { minItems: 1, maxItems: 200 }),
  },
  { additionalProperties: false },
);

export const DialplanFileSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    routes: Type.Array(DialplanRouteSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type DialplanStep = Static<typeof DialplanStepSchema>;
export type DialplanRoute = Static<typeof DialplanRouteSchema>;
export type DialplanFile = Static<typeof DialplanFileSchema>;
