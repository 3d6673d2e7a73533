/**
 * Answering-machine detection on a live call: the detector and the beep wait run on the
 * callee's audio as it arrives, each until it decides or the call's signal aborts. Both are
 * async functions so that a bad audio rate is a rejection too, like every other failure.
 */
import { AnsweringMachineDetector, type AmdOptions, type AmdOutcome } from './answering-machine-detector.js';
import { BeepWaiter, type BeepWaitOptions, type BeepWaitOutcome } from './beep-wait.js';
import { runOnCalleeAudio, type CalleeAudio } from './callee-audio.js';

/**
 * Who answered the call we placed: listens to the callee's audio from now on and resolves with
 * the verdict, within the analysis time (5 s by default) of audio. Rejects with the signal's
 * reason when `signal` aborts first, with a RangeError for a rate without whole 20 ms frames;
 * the listener is removed either way.
 */
export async function detectAnsweringMachine(audio: CalleeAudio, options: AmdOptions, signal: AbortSignal): Promise<AmdOutcome> {
  return runOnCalleeAudio(audio, new AnsweringMachineDetector(audio.audioRateHz, options), signal);
}

/**
 * After a `machine` verdict: resolves once the message can be left, at the end of the machine's
 * beep or, without one, after the silence that ends its greeting (at most the maximum wait).
 * After a verdict of reason `beep` the beep has already ended: there is nothing to wait for.
 * Rejects with the signal's reason when `signal` aborts first; the listener is removed either way.
 */
export async function waitForBeep(audio: CalleeAudio, options: BeepWaitOptions, signal: AbortSignal): Promise<BeepWaitOutcome> {
  return runOnCalleeAudio(audio, new BeepWaiter(audio.audioRateHz, options), signal);
}
