/**
 * The schema of the steps that speak to the caller and take an answer: `say`, `listen`, `menu`,
 * `gather` and `record`. Defaults come from {@link DIALPLAN_DEFAULTS}.
 */
import { Type } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';

/** A step id another step may name (goto, fallback, on_fail …). */
export const StepTarget = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

/** Voice, language and dialect a prompt may take instead of the call's. */
export const VoiceFields = {
  voice: Type.Optional(Type.String({ minLength: 1, description: "catalog voice id (default: the call's voice)" })),
  language: Type.Optional(Type.String({ minLength: 2, description: "language code (default: the call's language)" })),
  dialect: Type.Optional(Type.String({ minLength: 1, description: "dialect id of the language (default: the call's dialect)" })),
  dialect_text: Type.Optional(
    Type.Boolean({
      description:
        "the text is written in the Swiss German dialect already: spoken with the dialect's pronunciation, not rendered from Standard German (de-CH only; default: the route's dialect_text)",
    }),
  ),
};

/** The text of a prompt. */
export const PromptText = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 5000,
    description: `${description}; plain text or a <speak> document, with {{variable}} placeholders filled in`,
  });

/** A key on the phone's keypad. */
const Key = Type.String({ pattern: '^[0-9*#A-D]$', description: 'a key: 0-9, *, #, A-D' });
/** The key that ends an entry, or '' for none. */
const FinishKey = (fallback: string) =>
  Type.String({ pattern: '^[0-9*#A-D]?$', description: `the key that ends the entry; "" for none (default "${fallback}")` });

/** Retry prompts and the step to go on from after the last retry. */
const RetryFields = (defaults: { readonly retries: number }) => ({
  retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: `further tries after no input or no match (default ${defaults.retries})` })),
  no_input: Type.Optional(PromptText('said when nothing came, before the next try (default: a "sorry" in the call\'s language)')),
  no_match: Type.Optional(PromptText('said when the answer did not fit, before the next try (default: a "sorry" in the call\'s language)')),
  fallback: Type.Optional(StepTarget('the step to go on from after the last try (default: the next step)')),
});

const id = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the name goto and other steps use for this step' }));

export const SayStep = Type.Object(
  {
    id,
    say: Type.Object(
      {
        text: PromptText('what is said'),
        ...VoiceFields,
        barge_in: Type.Optional(Type.Boolean({ description: `caller speech or a key stops the prompt (default ${D.say.barge_in})` })),
        repeat: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: `how often the text is said in all (default ${D.say.repeat})` })),
        pause_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: `silence between repetitions (default ${D.say.pause_ms})` })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ListenStep = Type.Object(
  {
    id,
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

/** Spoken words that choose an option: one list for every language, or lists per language code. */
const Words = Type.Union(
  [
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 50 }),
    Type.Record(
      Type.String({ pattern: '^[a-zA-Z]{2}(-[a-zA-Z]{2})?$' }),
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 50 }),
      {
        additionalProperties: false,
      },
    ),
  ],
  { description: 'words (and synonyms) that choose the option: a list, or lists per language (de, fr, de-CH …)' },
);

export const MenuOption = Type.Object(
  {
    key: Type.Optional(Key),
    words: Type.Optional(Words),
    goto: StepTarget('the step the option leads to'),
  },
  { additionalProperties: false },
);

export const MenuStep = Type.Object(
  {
    id,
    menu: Type.Object(
      {
        prompt: PromptText('the menu'),
        options: Type.Array(MenuOption, { minItems: 1, maxItems: 20, description: 'the choices, each by key and/or words' }),
        ...RetryFields(D.menu),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 500, maximum: 60_000, description: `no key or word for this long is no input (default ${D.menu.timeout_ms})` }),
        ),
        ...VoiceFields,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const GatherStep = Type.Object(
  {
    id,
    gather: Type.Object(
      {
        prompt: Type.Optional(PromptText('asks for the keys')),
        into: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]*$', description: `the variable the keys land in (default ${D.gather.into})` })),
        min_digits: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, description: `fewer keys are no match (default ${D.gather.min_digits})` })),
        max_digits: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, description: `keys that end the entry (default ${D.gather.max_digits})` })),
        finish_on_key: Type.Optional(FinishKey(D.gather.finish_on_key)),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 500, maximum: 60_000, description: `no first key for this long is no input (default ${D.gather.timeout_ms})` }),
        ),
        inter_digit_timeout_ms: Type.Optional(
          Type.Integer({
            minimum: 500,
            maximum: 30_000,
            description: `no further key for this long ends the entry (default ${D.gather.inter_digit_timeout_ms})`,
          }),
        ),
        pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a regular expression the whole entry must match (e.g. ^[0-9]{8}$)' })),
        ...RetryFields(D.gather),
        ...VoiceFields,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const RecordStep = Type.Object(
  {
    id,
    record: Type.Object(
      {
        beep: Type.Optional(Type.Boolean({ description: `a beep before recording (default ${D.record.beep})` })),
        max_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: `the longest message (default ${D.record.max_seconds})` })),
        end_silence_ms: Type.Optional(
          Type.Integer({
            minimum: 500,
            maximum: 30_000,
            description: `silence after the caller spoke that ends the message (default ${D.record.end_silence_ms})`,
          }),
        ),
        timeout_ms: Type.Optional(
          Type.Integer({
            minimum: 1000,
            maximum: 60_000,
            description: `no voice at all for this long ends the step without a message (default ${D.record.timeout_ms})`,
          }),
        ),
        finish_on_key: Type.Optional(FinishKey(D.record.finish_on_key)),
        into: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]*$', description: `the variable the recording's id lands in (default ${D.record.into})` })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
