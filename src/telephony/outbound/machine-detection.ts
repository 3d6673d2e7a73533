/**
 * Answering-machine detection on the calls the gateway places, as the API and the dialplan see
 * it: off, `detect` (human, machine or unknown from the first seconds of the callee's audio), or
 * `detect_message_end` (for a machine, also wait for the beep or the end of its greeting, so
 * that the route leaves its message after it). The detection itself is in `../amd/`.
 */
import { DEFAULT_AMD_OPTIONS } from '../amd/answering-machine-detector.js';
import { DEFAULT_BEEP_WAIT_OPTIONS } from '../amd/beep-wait.js';
import type { CalleeAudio } from '../amd/callee-audio.js';
import { detectAnsweringMachine, waitForBeep } from '../amd/detect-answering-machine.js';

/** What a call orders. */
export type MachineDetectionMode = 'off' | 'detect' | 'detect_message_end';

/** What the detection found, as `GET /v1/calls/{id}` shows it and the route's variables hold it. */
export interface AmdOutcomeView {
  readonly result: 'human' | 'machine' | 'unknown';
  /** What decided it (`short-greeting`, `long-greeting`, `beep`, `silence`, `max-time`…). */
  readonly reason: string;
  /** Milliseconds from the answer to the decision. */
  readonly after_ms: number;
  /** With `detect_message_end` and a machine: milliseconds from the answer to the beep or the greeting's end; null otherwise. */
  readonly message_end_ms: number | null;
  /** Whether a beep ended the greeting (null when not waited for). */
  readonly beep: boolean | null;
}

/**
 * Runs the detection on an answered call's media (the callee's decoded audio): the verdict
 * and, with `detect_message_end` and a machine, the wait for its beep or the end of its greeting.
 * Rejects with the signal's reason when the call ends first.
 */
export async function detectOnChannel(audio: CalleeAudio, mode: Exclude<MachineDetectionMode, 'off'>, signal: AbortSignal): Promise<AmdOutcomeView> {
  const started = performance.now();
  const verdict = await detectAnsweringMachine(audio, DEFAULT_AMD_OPTIONS, signal);
  const afterMs = Math.round(performance.now() - started);
  const view = { result: verdict.result, reason: verdict.reason, after_ms: afterMs, message_end_ms: null, beep: null };
  if (mode === 'detect' || verdict.result !== 'machine') return view;
  // A verdict reached on the beep comes when the beep has ended: the message can start now.
  if (verdict.reason === 'beep') return { ...view, message_end_ms: afterMs, beep: true };
  const end = await waitForBeep(audio, DEFAULT_BEEP_WAIT_OPTIONS, signal);
  return { ...view, message_end_ms: Math.round(performance.now() - started), beep: end.beep };
}
