/**
 * The schema of the steps that hand the call to a bot: `webhook` (the bot decides each turn
 * over HTTP) and `stream` (the bot holds a WebSocket for as long as it talks with the caller:
 * Twilio Media Streams audio, or our text protocol). Defaults come from {@link DIALPLAN_DEFAULTS}.
 */
import { Type } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';
import { PromptText, StepTarget } from './prompt-step-schemas.js';

const id = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the name goto and other steps use for this step' }));

/** X- headers sent to a bot (a token for it). */
const BotHeaders = Type.Record(Type.String({ pattern: '^X-[A-Za-z0-9-]+$' }), Type.String({ maxLength: 500, pattern: '^[^\\r\\n]*$' }), {
  maxProperties: 10,
  additionalProperties: false,
  description: 'X- headers sent with every request (a token for the bot)',
});

export const WebhookStep = Type.Object(
  {
    id,
    webhook: Type.Object(
      {
        url: Type.String({
          pattern: '^https?://[^\\s@/]+(/\\S*)?$',
          maxLength: 2000,
          description: 'where each turn is sent (http or https, no credentials)',
        }),
        method: Type.Optional(
          Type.Union([Type.Literal('POST'), Type.Literal('PUT')], {
            description: `how each turn is sent, the turn being the JSON body either way (default ${D.webhook.method})`,
          }),
        ),
        headers: Type.Optional(BotHeaders),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 100, maximum: 30_000, description: `how long the bot may take to answer a turn (default ${D.webhook.timeout_ms})` }),
        ),
        retries: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 5, description: `further attempts when the bot cannot be reached at all (default ${D.webhook.retries})` }),
        ),
        filler: Type.Optional(
          Type.Object(
            {
              after_ms: Type.Integer({ minimum: 100, maximum: 30_000, description: 'said when the bot has not answered after this long' }),
              text: PromptText('what is said while the bot thinks'),
            },
            { additionalProperties: false },
          ),
        ),
        fallback: Type.Optional(PromptText("said when the bot fails or answers nonsense (default: an apology in the call's language)")),
        on_fail: Type.Optional(StepTarget('the step to go on from after the fallback (default: the call ends)')),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const StreamStep = Type.Object(
  {
    id,
    stream: Type.Object(
      {
        url: Type.String({
          pattern: '^wss?://[^\\s@/]+(/\\S*)?$',
          maxLength: 2000,
          description: "the bot's WebSocket (ws or wss, no credentials); the gateway connects to it",
        }),
        mode: Type.Optional(
          Type.Union([Type.Literal('media'), Type.Literal('text')], {
            description: `media: Twilio Media Streams (µ-law audio both ways); text: transcripts to the bot, text to speak from it (default ${D.stream.mode})`,
          }),
        ),
        parameters: Type.Optional(
          Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), Type.String({ maxLength: 500 }), {
            maxProperties: 20,
            additionalProperties: false,
            description: 'sent to the bot at the start (Twilio: customParameters), {{variable}} placeholders filled',
          }),
        ),
        headers: Type.Optional(BotHeaders),
        connect_timeout_ms: Type.Optional(
          Type.Integer({
            minimum: 100,
            maximum: 30_000,
            description: `how long the bot may take to accept the connection (default ${D.stream.connect_timeout_ms})`,
          }),
        ),
        fallback: Type.Optional(PromptText("said when the bot cannot be reached or fails mid-call (default: an apology in the call's language)")),
        on_fail: Type.Optional(StepTarget('the step to go on from after the fallback (default: the call ends)')),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
