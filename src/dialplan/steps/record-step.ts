import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `record`: a voicemail. A beep, then the caller's message until silence, the finishing key or
 * the length limit; stored (and transcribed when a recogniser for the call's language is
 * installed). The recording's id lands in `{{into}}` (default `{{recording}}`; empty when the
 * caller said nothing), how it ended in `{{record_ended_by}}`.
 */
export async function runRecord(step: StepOf<'record'>, context: StepContext): Promise<StepOutcome> {
  const defaults = DIALPLAN_DEFAULTS.record;
  const record = step.record;
  const outcome = await context.record({
    beep: record.beep ?? defaults.beep,
    maxSeconds: record.max_seconds ?? defaults.max_seconds,
    endSilenceMs: record.end_silence_ms ?? defaults.end_silence_ms,
    timeoutMs: record.timeout_ms ?? defaults.timeout_ms,
    finishOnKey: record.finish_on_key ?? defaults.finish_on_key,
  });
  context.vars[record.into ?? defaults.into] = outcome.recordingId ?? '';
  context.vars['record_ended_by'] = outcome.endedBy;
  context.logger.info({ recording: outcome.recordingId, seconds: outcome.seconds, endedBy: outcome.endedBy }, 'recorded');
  return outcome.endedBy === 'hangup' && context.signal.aborted ? { next: 'end' } : CONTINUE;
}
