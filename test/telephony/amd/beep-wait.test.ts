/**
 * Waiting for the beep after a greeting (real synthesised speech, synthetic beeps): the beep is
 * found where it ends, in both common pitches and at both rates; without one, the greeting's
 * end is the long silence after it; speech is never taken for a beep, nor is a blip or a tone
 * that goes on too long to be one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BeepWaiter, DEFAULT_BEEP_WAIT_OPTIONS } from '../../../src/telephony/amd/beep-wait.js';
import { loudSpan, SpeechAudio } from '../../helpers/speech-audio.js';
import { feedFrames, pieceStarts, recording, type Piece } from './amd-recordings.js';

const GREETING = 'Grüezi, hier ist der Anrufbeantworter der Familie Meier. Bitte sprechen Sie nach dem Piepton.';

let speech: SpeechAudio;
let greeting: Int16Array;
beforeAll(async () => {
  speech = await SpeechAudio.start();
  greeting = await speech.speak(GREETING, 8000, 'de', 'anna');
});
afterAll(async () => speech.close());

/** Feeds the recording from its start; the outcome and when it came, in seconds into the recording. */
function wait(pieces: readonly Piece[], rateHz = 8000, options = {}) {
  const outcome = feedFrames(new BeepWaiter(rateHz, options), recording(rateHz, pieces));
  return { outcome, atS: outcome ? outcome.afterMs / 1000 : NaN, starts: pieceStarts(rateHz, pieces) };
}

describe('waiting for the beep', () => {
  for (const [beepHz, beepMs] of [
    [1000, 300],
    [440, 500],
  ] as const) {
    it(`finds a ${beepHz} Hz beep of ${beepMs} ms after the greeting, at its end (±100 ms)`, () => {
      const { outcome, atS, starts } = wait([greeting, { silenceS: 0.4 }, { beepHz, beepMs }, { silenceS: 2 }]);
      expect(outcome).toMatchObject({ beep: true, reason: 'beep' });
      expect(Math.abs(atS - (starts[2]! + beepMs / 1000))).toBeLessThan(0.1);
    });
  }

  it('finds the beep at 16 kHz too', async () => {
    const wide = await speech.speak(GREETING, 16000, 'de', 'anna');
    const { outcome, atS, starts } = wait([wide, { beepHz: 1000, beepMs: 300 }, { silenceS: 1 }], 16000);
    expect(outcome).toMatchObject({ beep: true });
    expect(Math.abs(atS - (starts[1]! + 0.3))).toBeLessThan(0.1);
  });

  it('without a beep, takes the silence after the greeting for its end', () => {
    const pieces: Piece[] = [greeting, { silenceS: 4 }];
    const { outcome, atS } = wait(pieces);
    expect(outcome).toMatchObject({ beep: false, reason: 'silence' });
    const speechEnd = loudSpan(recording(8000, pieces), 8000).end;
    expect(atS - speechEnd).toBeGreaterThanOrEqual(DEFAULT_BEEP_WAIT_OPTIONS.endSilenceMs / 1000 - 0.1);
    expect(atS - speechEnd).toBeLessThan(DEFAULT_BEEP_WAIT_OPTIONS.endSilenceMs / 1000 + 0.3);
  });

  it('never takes speech for a beep, in any voice', async () => {
    const listenToAll = { endSilenceMs: Infinity, maxWaitMs: Infinity };
    for (const voice of ['jonas', 'anna', 'lea', 'marco']) {
      const said = await speech.speak(`${GREETING} Hallo? Ja, bitte?`, 8000, 'de', voice);
      expect(wait([said, { silenceS: 0.5 }], 8000, listenToAll).outcome, voice).toBeNull();
    }
  });

  it('takes a 150 ms tone for a beep, but not a 60 ms blip or a 4 s tone', () => {
    const listenToAll = { endSilenceMs: Infinity, maxWaitMs: Infinity };
    for (const rateHz of [8000, 16000])
      for (const offsetS of [0.5, 0.507, 0.513]) {
        const beep = wait([{ silenceS: offsetS }, { beepHz: 800, beepMs: 150 }, { silenceS: 0.5 }], rateHz, listenToAll);
        expect(beep.outcome, `${rateHz} Hz at ${offsetS} s`).toMatchObject({ beep: true });
      }
    expect(wait([{ silenceS: 0.5 }, { beepHz: 800, beepMs: 60 }, { silenceS: 0.5 }], 8000, listenToAll).outcome).toBeNull();
    expect(wait([{ silenceS: 0.5 }, { beepHz: 425, beepMs: 4000 }, { silenceS: 0.5 }], 8000, listenToAll).outcome).toBeNull();
  });

  it('leaves the beep band alone: tones below 400 Hz and above 2000 Hz are no beep', () => {
    const listenToAll = { endSilenceMs: Infinity, maxWaitMs: Infinity };
    for (const beepHz of [300, 2400]) expect(wait([{ silenceS: 0.5 }, { beepHz, beepMs: 400 }, { silenceS: 0.5 }], 8000, listenToAll).outcome).toBeNull();
  });

  it('gives up after the longest wait', () => {
    const { outcome } = wait([greeting, greeting], 8000, { maxWaitMs: 3000 });
    expect(outcome).toEqual({ beep: false, reason: 'max-wait', afterMs: 3000 });
  });
});
