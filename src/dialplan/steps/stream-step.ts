import { botSecret } from '../../bots/bot-secret.js';
import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { botFailed } from './bot-failure.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `stream`: the call goes to a bot over a WebSocket for as long as the bot talks with the
 * caller — Twilio Media Streams audio (`media`) or transcripts and text to speak (`text`). The
 * call is answered first. The bot closing the socket normally (1000) ends the step and the
 * dialplan goes on; a bot that cannot be reached or drops the connection mid-call has failed:
 * the fallback is said, then `on_fail` runs, or the call ends.
 */
export async function runStream(step: StepOf<'stream'>, context: StepContext): Promise<StepOutcome> {
  const fields = step.stream;
  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields.parameters ?? {})) parameters[name] = context.fill(value);
  const outcome = await context.stream({
    url: fields.url,
    mode: fields.mode ?? DIALPLAN_DEFAULTS.stream.mode,
    parameters,
    headers: Object.entries(fields.headers ?? {}),
    secret: botSecret(context),
    connectTimeoutMs: fields.connect_timeout_ms ?? DIALPLAN_DEFAULTS.stream.connect_timeout_ms,
  });
  if (context.signal.aborted || outcome.result === 'ended') return { next: 'end' };
  if (outcome.result === 'closed') return CONTINUE;
  return botFailed(fields, context, outcome.reason);
}
