import { DIALPLAN_DEFAULTS } from '../../../dialplan/dialplan-defaults.js';
import { speakPrompt } from '../call-turns.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `say`: speaks a text or `<speak>` document in the step's (or the route's) voice, language
 * and dialect; the caller may interrupt it (barge-in) unless `barge_in: false`. The turn's
 * latency (the caller's last voice → our first packet) is reported when the caller spoke just
 * before.
 */
export async function runSay(step: StepOf<'say'>, context: StepContext): Promise<StepOutcome> {
  const { route } = context;
  const media = await context.earlyMedia();
  const started = performance.now();
  const dialect = step.say.dialect ?? route.dialect;
  const outcome = await speakPrompt(
    media,
    context.services.engines,
    route.engines ?? DIALPLAN_DEFAULTS.route.engines,
    {
      text: context.fill(step.say.text),
      voice: step.say.voice ?? route.voice,
      language: step.say.language ?? route.language,
      ...(dialect ? { dialect } : {}),
      bargeIn: step.say.barge_in ?? DIALPLAN_DEFAULTS.say.barge_in,
    },
    context.signal,
  );
  context.meter({ ttsSeconds: outcome.synthesisedSeconds });
  const heardLast = outcome.playout?.lastVoiceAtMs ?? 0;
  const firstPacket = outcome.playout?.firstPacketAtMs ?? 0;
  if (heardLast > 0 && firstPacket > 0 && heardLast < started) context.report({ turnLatencyMs: firstPacket - heardLast });
  if (outcome.interrupted) context.report({ bargeInHeardSeconds: outcome.playedSeconds });
  return CONTINUE;
}
