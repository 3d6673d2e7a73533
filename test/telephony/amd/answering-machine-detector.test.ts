/**
 * The answering-machine detector on real (synthesised) speech: short answers then silence are
 * people, found soon after they stop; greetings are machines, found while they still play; a
 * beep is a machine; silence is unknown. At 8 and 16 kHz, with line noise throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnsweringMachineDetector, DEFAULT_AMD_OPTIONS } from '../../../src/telephony/amd/answering-machine-detector.js';
import { loudSpan, SpeechAudio } from '../../helpers/speech-audio.js';
import { feedFrames, pieceStarts, recording, type Piece } from './amd-recordings.js';

const GREETING =
  'Guten Tag, Sie sind verbunden mit der Combox von Hans Müller. Ich bin im Moment nicht erreichbar. Bitte hinterlassen Sie eine Nachricht nach dem Signalton.';

let speech: SpeechAudio;
beforeAll(async () => {
  speech = await SpeechAudio.start();
});
afterAll(async () => speech.close());

/** A call answered with `text` after `leadS` of silence, then 3 s of silence; with where the speech ends (s). */
async function answered(text: string, rateHz: number, options: { language?: string; voice?: string; leadS?: number } = {}) {
  const said = await speech.speak(text, rateHz, options.language ?? 'de', options.voice ?? 'jonas');
  const pieces: Piece[] = [{ silenceS: options.leadS ?? 0.5 }, said, { silenceS: 3 }];
  const pcm = recording(rateHz, pieces);
  const starts = pieceStarts(rateHz, pieces);
  return { pcm, speech: loudSpan(pcm, rateHz, starts[1]! * rateHz, starts[2]! * rateHz) };
}

describe('the answering-machine detector', () => {
  for (const rateHz of [8000, 16000]) {
    it(`takes a short "Hallo?" followed by silence for a person, within 1.5 s of its end (${rateHz} Hz)`, async () => {
      const call = await answered('Hallo?', rateHz);
      const outcome = feedFrames(new AnsweringMachineDetector(rateHz), call.pcm);
      expect(outcome).toMatchObject({ result: 'human', reason: 'short-greeting' });
      // Decided on the silence after the word: not before it has lasted, and soon after.
      const afterEndMs = outcome!.afterMs - call.speech.end * 1000;
      expect(afterEndMs).toBeGreaterThanOrEqual(DEFAULT_AMD_OPTIONS.afterGreetingSilenceMs - 100);
      expect(afterEndMs).toBeLessThan(1500);
    });

    it(`takes a greeting of several sentences for a machine before it ends (${rateHz} Hz)`, async () => {
      const call = await answered(GREETING, rateHz, { voice: 'anna' });
      expect(call.speech.end - call.speech.start).toBeGreaterThan(6);
      const outcome = feedFrames(new AnsweringMachineDetector(rateHz), call.pcm);
      expect(outcome).toMatchObject({ result: 'machine', reason: 'long-greeting' });
      // About the greeting length after the speech began, seconds before the greeting ends.
      expect(outcome!.afterMs).toBeGreaterThanOrEqual(call.speech.start * 1000 + DEFAULT_AMD_OPTIONS.greetingMs - 100);
      expect(outcome!.afterMs).toBeLessThan(call.speech.start * 1000 + 3000);
    });
  }

  it('takes "Grüezi, Müller?" for a person, in every voice', async () => {
    for (const voice of ['jonas', 'anna', 'lea', 'marco']) {
      const call = await answered('Grüezi, Müller?', 8000, { voice });
      const outcome = feedFrames(new AnsweringMachineDetector(8000), call.pcm);
      expect(outcome, voice).toMatchObject({ result: 'human', reason: 'short-greeting' });
      expect(outcome!.afterMs - call.speech.end * 1000, voice).toBeLessThan(1500);
    }
  });

  it('takes an English voicemail greeting for a machine, and "Hello?" for a person', async () => {
    const greeting = await answered("Hi, you've reached John. Please leave a message after the tone.", 8000, { language: 'en', voice: 'marco' });
    expect(feedFrames(new AnsweringMachineDetector(8000), greeting.pcm)).toMatchObject({ result: 'machine' });
    const hello = await answered('Hello?', 8000, { language: 'en', voice: 'lea' });
    expect(feedFrames(new AnsweringMachineDetector(8000), hello.pcm)).toMatchObject({ result: 'human' });
  });

  it('finds a person who answers from the very first frame, without leading silence', async () => {
    const call = await answered('Ja?', 8000, { leadS: 0 });
    expect(feedFrames(new AnsweringMachineDetector(8000), call.pcm)).toMatchObject({ result: 'human', reason: 'short-greeting' });
  });

  it('takes a beep for a machine, reported when the beep has ended', () => {
    const pieces: Piece[] = [{ silenceS: 0.6 }, { beepHz: 1000, beepMs: 300 }, { silenceS: 2 }];
    const outcome = feedFrames(new AnsweringMachineDetector(8000), recording(8000, pieces));
    expect(outcome).toMatchObject({ result: 'machine', reason: 'beep' });
    expect(Math.abs(outcome!.afterMs - 900)).toBeLessThanOrEqual(60);
  });

  it('says unknown for silence, once the initial silence is over', () => {
    const outcome = feedFrames(new AnsweringMachineDetector(8000), recording(8000, [{ silenceS: 4 }], { noise: 200 }));
    expect(outcome).toEqual({ result: 'unknown', reason: 'silence', afterMs: DEFAULT_AMD_OPTIONS.initialSilenceMs });
  });

  it('says unknown when the analysis time runs out undecided', async () => {
    // Speech starting at 1.8 s is still short of the greeting length when 2.4 s are up.
    const call = await answered('Ja, hallo, hier ist Meier.', 8000, { leadS: 1.8 });
    const outcome = feedFrames(new AnsweringMachineDetector(8000, { maxAnalysisMs: 2400 }), call.pcm);
    expect(outcome).toEqual({ result: 'unknown', reason: 'max-time', afterMs: 2400 });
  });

  it('keeps its verdict: later frames change nothing', async () => {
    const call = await answered('Hallo?', 8000);
    const detector = new AnsweringMachineDetector(8000);
    const outcome = feedFrames(detector, call.pcm);
    const greeting = await answered(GREETING, 8000);
    expect(feedFrames(detector, greeting.pcm)).toBe(outcome);
    expect(detector.decision).toBe(outcome);
  });

  it('takes only whole 20 ms frames, at rates that have them', () => {
    expect(() => new AnsweringMachineDetector(8000).push(new Int16Array(100))).toThrow(RangeError);
    expect(() => new AnsweringMachineDetector(8020)).toThrow(RangeError);
    expect(new AnsweringMachineDetector(16000).frameSamples).toBe(320);
  });
});
