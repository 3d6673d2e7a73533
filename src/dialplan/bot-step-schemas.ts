/**
 * The schema of the steps that hand the call to a bot: `webhook` (the bot decides each turn
 * over HTTP). Defaults come from {@link DIALPLAN_DEFAULTS}.
 */
import { Type } from '@sinclair/typebox';
import { DIALPLAN_DEFAULTS as D } from './dialplan-defaults.js';
import { PromptText, StepTarget } from './prompt-step-schemas.js';

const id = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the name goto and other steps use for this step' }));

export const WebhookStep = Type.Object(
  {
    id,
    webhook: Type.Object(
      {
        url: Type.String({
          pattern: '^https?://[^\\s@/]+(/\\S*)?$',
          maxLength: 2000,
          description: 'where each turn is POSTed (http or https, no credentials)',
        }),
        headers: Type.Optional(
          Type.Record(Type.String({ pattern: '^X-[A-Za-z0-9-]+$' }), Type.String({ maxLength: 500, pattern: '^[^\\r\\n]*$' }), {
            maxProperties: 10,
            additionalProperties: false,
            description: 'X- headers sent with every request (a token for the bot)',
          }),
        ),
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
