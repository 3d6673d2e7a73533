import { botActions, type CallerTurn, type WebhookRequest } from '../../bots/webhook-turns.js';
import { botSecret } from '../../bots/bot-secret.js';
import { postTurn, type TurnPost, type TurnReply } from '../../bots/webhook-client.js';
import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { botFailed } from './bot-failure.js';
import type { DialplanStep } from '../dialplan-schema.js';
import { stepKind } from '../step-kinds.js';
import { promptVoice } from './prompt-voice.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome, type StepRunner } from './step-context.js';

/** Hand-overs from one bot to another (a `webhook` action) in one step; beyond, the bot has failed. */
const MAX_HANDOVERS = 10;

type WebhookFields = StepOf<'webhook'>['webhook'];

/**
 * `webhook`: a bot decides each turn over HTTP. At the start and after each of the caller's
 * turns the gateway POSTs (or PUTs, as the step's `method` says) the call, its variables and
 * the turn (webhook-turns.ts); the bot answers with actions in the dialplan's vocabulary,
 * which run one after the other until one waits for the caller (listen, menu, gather, record,
 * transfer): its result is the next turn, and the actions after it are dropped for the bot's
 * new answer. An answer with no actions ends the step and the dialplan goes on; `hangup` or a
 * transfer that worked ends the call; a `webhook` action hands over to another bot. A bot that
 * cannot be reached, times out, answers an error or nonsense has failed: the step's `fallback`
 * (an apology) is said, then `on_fail` runs, or the call ends. `run` runs an action (the step
 * registry, passed in to keep the registry free of cycles).
 */
export async function runWebhook(step: StepOf<'webhook'>, context: StepContext, run: StepRunner<DialplanStep>): Promise<StepOutcome> {
  let bot = step.webhook;
  let request: WebhookRequest = requestOf(context, 'start');
  let handovers = 0;
  try {
    for (;;) {
      const reply = await ask(bot, request, context);
      if (context.signal.aborted) return { next: 'end' };
      if ('failure' in reply) return await botFailed(step.webhook, context, reply.failure);
      const parsed = botActions(reply.answer, context.route);
      if ('problem' in parsed) return await botFailed(step.webhook, context, parsed.problem);
      let turn: CallerTurn | null = null;
      let next: WebhookFields | null = null;
      for (const action of parsed.actions) {
        if ('webhook' in action) {
          next = action.webhook;
          break;
        }
        const outcome = await run(action, context);
        if (context.signal.aborted || outcome.next === 'end') return { next: 'end' };
        turn = turnOf(action, outcome, context);
        if (turn) break;
      }
      if (next) {
        if (++handovers > MAX_HANDOVERS) return await botFailed(step.webhook, context, `more than ${MAX_HANDOVERS} hand-overs from bot to bot`);
        context.logger.info({ from: bot.url, to: next.url }, 'bot hand-over');
        bot = next;
        request = requestOf(context, 'start');
        continue;
      }
      if (!turn) return CONTINUE;
      request = { ...requestOf(context, 'turn'), turn };
    }
  } finally {
    // The bot hears that the call ended; nobody waits for its answer.
    if (context.signal.aborted) void postTurn(postOf(bot, context, 0), requestOf(context, 'hangup'), new AbortController().signal);
  }
}

/** What an action that waited for the caller got, as the bot's next turn; null for an action that does not wait. */
function turnOf(action: DialplanStep, outcome: StepOutcome, context: StepContext): CallerTurn | null {
  const vars = context.vars;
  switch (stepKind(action)) {
    case 'listen':
      if (vars['heard'] && vars['heard'] !== vars['digits']) return { type: 'speech', transcript: vars['heard'], ...context.lastHeard };
      return vars['digits'] ? { type: 'digits', digits: vars['digits'] } : { type: 'no_input' };
    case 'menu':
      return {
        type: 'choice',
        choice: outcome.next === 'goto' ? outcome.target : '',
        digits: vars['digits'] ?? '',
        transcript: vars['heard'] === vars['digits'] ? '' : (vars['heard'] ?? ''),
      };
    case 'gather': {
      const into = (action as StepOf<'gather'>).gather.into ?? DIALPLAN_DEFAULTS.gather.into;
      return vars[into] ? { type: 'digits', digits: vars[into] } : { type: 'no_input' };
    }
    case 'record':
      return {
        type: 'recording',
        recording: vars[(action as StepOf<'record'>).record.into ?? DIALPLAN_DEFAULTS.record.into] || null,
        ended_by: vars['record_ended_by'] ?? '',
      };
    case 'transfer':
      return { type: 'transfer', result: vars['transfer'] ?? '', status: vars['transfer_status'] ? Number(vars['transfer_status']) : null };
    case 'stream':
      // A stream bot that failed has had its fallback said; the webhook bot decides what comes next.
      return outcome.next === 'continue'
        ? { type: 'stream', result: 'closed', error: null }
        : { type: 'stream', result: 'failed', error: vars['bot_error'] ?? null };
    default:
      return null;
  }
}

/** The request's fixed part: the call and its variables now. */
function requestOf(context: StepContext, event: WebhookRequest['event']): WebhookRequest {
  const { vars } = context;
  return {
    event,
    call: { id: context.callId, caller: vars['caller'] ?? '', called: vars['called'] ?? '', language: context.voice.language, route: context.route.number },
    variables: { ...vars },
  };
}

function postOf(bot: WebhookFields, context: StepContext, retries = bot.retries ?? DIALPLAN_DEFAULTS.webhook.retries): TurnPost {
  return {
    url: bot.url,
    method: bot.method ?? DIALPLAN_DEFAULTS.webhook.method,
    headers: Object.entries(bot.headers ?? {}),
    timeoutMs: bot.timeout_ms ?? DIALPLAN_DEFAULTS.webhook.timeout_ms,
    retries,
    secret: botSecret(context),
  };
}

/** Asks the bot; says the filler when it takes longer than the step allows for silence, and lets the filler finish. */
async function ask(bot: WebhookFields, request: WebhookRequest, context: StepContext): Promise<TurnReply> {
  const started = performance.now();
  const answer = postTurn(postOf(bot, context), request, context.signal);
  const filler = bot.filler;
  if (!filler) return answer;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), filler.after_ms)));
  const first = await Promise.race([answer, late]);
  clearTimeout(timer);
  if (first !== 'late') return first;
  context.logger.info({ waitedMs: Math.round(performance.now() - started) }, 'bot slow: filler');
  await context.say({ text: context.fill(filler.text), ...promptVoice(context, {}), bargeIn: false });
  return answer;
}
