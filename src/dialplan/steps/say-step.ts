import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { promptVoice } from './prompt-voice.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `say`: speaks a text or `<speak>` document in the step's (or the call's) voice, language and
 * dialect, `repeat` times with `pause_ms` between; the caller may interrupt it (barge-in), which
 * also ends the repetitions, unless `barge_in: false`.
 */
export async function runSay(step: StepOf<'say'>, context: StepContext): Promise<StepOutcome> {
  const defaults = DIALPLAN_DEFAULTS.say;
  const say = step.say;
  const repeat = say.repeat ?? defaults.repeat;
  for (let time = 0; time < repeat && !context.signal.aborted; time++) {
    if (time > 0) await context.pause(say.pause_ms ?? defaults.pause_ms);
    const spoken = await context.say({ text: context.fill(say.text), ...promptVoice(context, say), bargeIn: say.barge_in ?? defaults.barge_in });
    if (spoken.interrupted) break;
  }
  return CONTINUE;
}
