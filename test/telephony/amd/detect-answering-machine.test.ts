/**
 * Detection on a live call's audio events: a greeting then its beep, detected and waited for
 * in turn on one stream; chunks of any size; audio that stops coming; and the signal, which
 * settles every wait at once and leaves no listener behind.
 */
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';
import type { CalleeAudio } from '../../../src/telephony/amd/callee-audio.js';
import { detectAnsweringMachine, waitForBeep } from '../../../src/telephony/amd/detect-answering-machine.js';
import { SpeechAudio } from '../../helpers/speech-audio.js';
import { pieceStarts, recording, type Piece } from './amd-recordings.js';

/** The project's media channel is what the detector listens to (checked when the tests compile). */
const _channelIsCalleeAudio = (channel: MediaChannel): CalleeAudio => channel;

/** A callee whose audio is played as events, a chunk per turn of the event loop. */
class FakeCallee extends EventEmitter<{ audio: [Int16Array] }> implements CalleeAudio {
  /** Samples played so far. */
  played = 0;

  constructor(readonly audioRateHz: number) {
    super();
  }

  async play(pcm: Int16Array, chunk = this.audioRateHz / 50): Promise<void> {
    for (let at = 0; at + chunk <= pcm.length; at += chunk) {
      this.played += chunk;
      this.emit('audio', pcm.slice(at, at + chunk));
      await new Promise(setImmediate);
    }
  }
}

const never = new AbortController().signal;
let speech: SpeechAudio;
beforeAll(async () => {
  speech = await SpeechAudio.start();
});
afterAll(async () => speech.close());

describe('detection on a call', () => {
  it('detects the machine, then waits for its beep and finds it where it ends (±100 ms)', async () => {
    const greeting = await speech.speak(
      'Guten Tag, Sie sind verbunden mit der Combox von Hans Müller. Bitte hinterlassen Sie eine Nachricht nach dem Signalton.',
      8000,
      'de',
      'jonas',
    );
    const pieces: Piece[] = [{ silenceS: 0.5 }, greeting, { silenceS: 0.5 }, { beepHz: 1000, beepMs: 300 }, { silenceS: 2 }];
    const beepEndS = pieceStarts(8000, pieces)[3]! + 0.3;
    const callee = new FakeCallee(8000);
    const detecting = detectAnsweringMachine(callee, {}, never);
    const playing = callee.play(recording(8000, pieces));
    const verdict = await detecting;
    expect(verdict).toMatchObject({ result: 'machine', reason: 'long-greeting' });
    // The verdict came while the greeting played, at the moment it says.
    expect(callee.played / 8).toBe(verdict.afterMs);
    const waitFromMs = callee.played / 8;
    const beep = await waitForBeep(callee, {}, never);
    expect(beep).toMatchObject({ beep: true, reason: 'beep' });
    expect(Math.abs((waitFromMs + beep.afterMs) / 1000 - beepEndS)).toBeLessThan(0.1);
    expect(callee.listenerCount('audio')).toBe(0);
    await playing;
  });

  it('takes audio in chunks of any size', async () => {
    const pieces: Piece[] = [{ silenceS: 0.4 }, { beepHz: 440, beepMs: 500 }, { silenceS: 1 }];
    const callee = new FakeCallee(16000);
    const detecting = detectAnsweringMachine(callee, {}, never);
    await callee.play(recording(16000, pieces), 333);
    expect(await detecting).toMatchObject({ result: 'machine', reason: 'beep', afterMs: 920 });
  });

  it('hears audio that stops coming as silence, and decides in time', async () => {
    const hallo = await speech.speak('Hallo?', 8000, 'de', 'anna');
    const callee = new FakeCallee(8000);
    const started = performance.now();
    const verdict = detectAnsweringMachine(callee, { maxAnalysisMs: 1500 }, never);
    // "Hallo?", then nothing (a phone that sends no packets while its user is quiet).
    await callee.play(recording(8000, [{ silenceS: 0.2 }, hallo]));
    expect(await verdict).toMatchObject({ result: 'human', reason: 'short-greeting' });
    // At the analysis time plus the allowance for late audio (500 ms): the missing audio was waited for, not long.
    const tookMs = performance.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(1900);
    expect(tookMs).toBeLessThan(3500);
    expect(callee.listenerCount('audio')).toBe(0);
  });

  it('says unknown when no audio comes at all', async () => {
    const callee = new FakeCallee(8000);
    const outcome = await detectAnsweringMachine(callee, { initialSilenceMs: 400, maxAnalysisMs: 600 }, never);
    expect(outcome).toEqual({ result: 'unknown', reason: 'silence', afterMs: 400 });
  });

  it('settles at once when aborted, with the reason, and stops listening', async () => {
    for (const wait of [detectAnsweringMachine, waitForBeep]) {
      const callee = new FakeCallee(8000);
      const controller = new AbortController();
      const pending = wait(callee, {}, controller.signal);
      void callee.play(recording(8000, [{ silenceS: 0.3 }]));
      expect(callee.listenerCount('audio')).toBe(1);
      const reason = new Error('hung up');
      const started = performance.now();
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      expect(performance.now() - started).toBeLessThan(50);
      expect(callee.listenerCount('audio')).toBe(0);
    }
  });

  it('waits without end when asked to, until the signal aborts', async () => {
    const callee = new FakeCallee(8000);
    const controller = new AbortController();
    let settled = false;
    const pending = waitForBeep(callee, { endSilenceMs: Infinity, maxWaitMs: Infinity }, controller.signal).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('does not start when the signal has already aborted', async () => {
    const callee = new FakeCallee(8000);
    await expect(detectAnsweringMachine(callee, {}, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(callee.listenerCount('audio')).toBe(0);
  });

  it('rejects audio at a rate without whole 20 ms frames', async () => {
    await expect(waitForBeep(new FakeCallee(11025), {}, never)).rejects.toThrow(RangeError);
  });
});
