import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { promptVoice } from './prompt-voice.js';
import { goOn, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `transfer`: hands the caller to a person, by REFER or by a bridged call (see
 * {@link StepContext.transfer}). Sets `{{transfer}}` (transferred, bridged, busy, no_answer,
 * refused, failed) and `{{transfer_status}}` (the SIP status, if any). A transfer that worked
 * ends the dialplan; one that failed goes on with `on_fail`.
 */
export async function runTransfer(step: StepOf<'transfer'>, context: StepContext): Promise<StepOutcome> {
  const defaults = DIALPLAN_DEFAULTS.transfer;
  const transfer = step.transfer;
  const waiting = transfer.waiting ?? defaults.waiting;
  const outcome = await context.transfer({
    target: context.fill(transfer.to),
    mode: transfer.mode ?? defaults.mode,
    ...(transfer.trunk !== undefined ? { trunk: transfer.trunk } : {}),
    ...(transfer.caller_id !== undefined ? { callerId: transfer.caller_id } : {}),
    diversion: transfer.diversion ?? false,
    // Header values are one line: a placeholder must not smuggle a line break into the request.
    headers: Object.entries(transfer.headers ?? {}).map(([name, value]) => [name, context.fill(value).replace(/[\r\n]+/g, ' ')] as const),
    ringTimeoutMs: (transfer.ring_timeout_s ?? defaults.ring_timeout_s) * 1000,
    waiting: waiting === 'ringback' ? 'ringback' : { text: context.fill(waiting), ...promptVoice(context, {}), bargeIn: false },
  });
  context.vars['transfer'] = outcome.result;
  context.vars['transfer_status'] = outcome.status === null ? '' : String(outcome.status);
  context.logger.info({ to: transfer.to, ...outcome }, 'transfer');
  if (outcome.result === 'transferred' || outcome.result === 'bridged' || context.signal.aborted) return { next: 'end' };
  return goOn(transfer.on_fail);
}
