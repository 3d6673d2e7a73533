import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `listen`: waits for the caller's speech and/or keys. The transcript lands in `{{heard}}`
 * (the keys when nothing was said), the keys in `{{digits}}`. Without a free recogniser the
 * step takes keys only, or is skipped when it takes none; the call goes on either way.
 */
export async function runListen(step: StepOf<'listen'>, context: StepContext): Promise<StepOutcome> {
  const defaults = DIALPLAN_DEFAULTS.listen;
  const listen = step.listen;
  const language = listen.language ?? context.voice.language;
  const outcome = await context.listen({
    speech: listen.speech ?? defaults.speech,
    dtmf: listen.dtmf ?? defaults.dtmf,
    language,
    vocabulary: listen.vocabulary ?? [],
    timeoutMs: listen.timeout_ms ?? defaults.timeout_ms,
    maxMs: listen.max_ms ?? defaults.max_ms,
    maxDigits: listen.max_digits ?? defaults.max_digits,
    endSilenceMs: listen.end_silence_ms ?? defaults.end_silence_ms,
  });
  if (outcome.recogniserBusy)
    context.logger.warn(
      { language },
      listen.dtmf === false ? 'no recogniser free: the listen step was skipped' : 'no recogniser free: the listen step took keys only',
    );
  context.vars['heard'] = outcome.heard || outcome.digits;
  context.vars['digits'] = outcome.digits;
  context.logger.info({ heard: outcome.heard, digits: outcome.digits, reason: outcome.reason }, 'listened');
  return outcome.reason === 'ended' ? { next: 'end' } : CONTINUE;
}
