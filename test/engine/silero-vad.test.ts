/**
 * Silero voice activity detection through the real sherpa-onnx runtime, with a tiny
 * hand-made model (test/helpers/tiny-silero-vad.ts: windows above about -40 dBFS are speech);
 * the real model cannot be downloaded on the test machines.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SherpaModelError } from '../../engine/sherpa/sherpa-model-check.js';
import { SherpaSttEngine } from '../../engine/sherpa/sherpa-stt-engine.js';
import { checkSileroModel, sileroDetectors } from '../../engine/sherpa/silero-vad.js';
import type { FrameClassifierFactory } from '../../engine/vad/frame-classifier.js';
import { loadWebRtcVad, WebRtcVad } from '../../engine/vad/webrtc-vad.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { tonePcm } from '../helpers/audio-fixtures.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { writeTinyNemoCtcModel } from '../helpers/tiny-nemo-ctc.js';
import { writeTinySileroVad } from '../helpers/tiny-silero-vad.js';
import { recognise } from './stt-conformance.js';

const RATE = 16000;
let dir: string;
let model: string;
let detectors: FrameClassifierFactory;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-silero-'));
  model = await writeTinySileroVad(dir);
  await loadWebRtcVad();
  detectors = await sileroDetectors(model);
});
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

/** Speech decisions for each 20 ms frame of `pcm`, as a string of 0 and 1. */
function decisions(pcm: Int16Array): string {
  const detector = detectors(RATE);
  let out = '';
  for (let at = 0; at + detector.frameSamples <= pcm.length; at += detector.frameSamples)
    out += detector.isSpeech(pcm.subarray(at, at + detector.frameSamples)) ? '1' : '0';
  detector.close();
  return out;
}

describe('Silero voice activity detection (sherpa-onnx)', () => {
  it('finds the loud stretch frame by frame, within a window of its edges', () => {
    const pcm = concatPcm([silencePcm(0.5, RATE), tonePcm(0.7, RATE, 300), silencePcm(0.8, RATE)]);
    const frames = decisions(pcm);
    expect(frames).toMatch(/^0+1+0+$/);
    const first = frames.indexOf('1') * 0.02;
    const last = frames.lastIndexOf('1') * 0.02;
    // Silero decides per 32 ms window and waits 30 ms of speech and 50 ms of silence.
    expect(first).toBeGreaterThanOrEqual(0.5);
    expect(first).toBeLessThan(0.62);
    expect(last).toBeGreaterThan(1.15);
    expect(last).toBeLessThan(1.32);
    expect(decisions(silencePcm(2, RATE))).not.toContain('1');
  });

  it('leaves other rates to WebRTC and refuses frames of the wrong size', () => {
    const telephone = detectors(8000);
    expect(telephone).toBeInstanceOf(WebRtcVad);
    telephone.close();
    const detector = detectors(RATE);
    expect(detector.frameSamples).toBe(320);
    expect(() => detector.isSpeech(new Int16Array(160))).toThrow(RangeError);
    detector.close();
    expect(() => detector.isSpeech(new Int16Array(320))).toThrow(/closed/);
  });

  it('ends utterances for a recogniser in place of WebRTC', async () => {
    await writeTinyNemoCtcModel(path.join(dir, 'ctc'));
    const engine = await SherpaSttEngine.start({
      id: 'sherpa-onnx:tiny',
      type: 'nemo-ctc',
      folder: path.join(dir, 'ctc'),
      paths: { model: 'model.onnx', tokens: 'tokens.txt' },
      languages: ['en'],
      modelLanguage: 'en',
      workers: 1,
      detectorFor: detectors,
    });
    const speech = await SpeechAudio.start();
    try {
      const said = await speech.speak('Hello.', RATE);
      const audio = concatPcm([silencePcm(0.5, RATE), said, silencePcm(1.5, RATE), said, silencePcm(1, RATE)]);
      const finals = await recognise(engine, { language: 'en', vocabulary: [], sampleRateHz: RATE }, audio);
      expect(finals.map((event) => event.type)).toEqual(['final', 'final']);
      expect(finals[1]!.type === 'final' && finals[1]!.startSeconds).toBeGreaterThan(0.5 + said.length / RATE + 1);
    } finally {
      await engine.close();
      await speech.close();
    }
  });

  it('refuses a model sherpa-onnx would end the process over', async () => {
    const renamed = await writeTinySileroVad(path.join(dir, 'renamed'), { inputNames: ['x', 'state', 'sr'] });
    await expect(checkSileroModel(renamed)).rejects.toThrow(SherpaModelError);
    await expect(sileroDetectors(renamed)).rejects.toThrow(/is not a Silero VAD model sherpa-onnx runs: inputs \(x, state, sr\)/);
    const notOnnx = path.join(dir, 'not-onnx.onnx');
    await fs.writeFile(notOnnx, 'a web page');
    await expect(sileroDetectors(notOnnx)).rejects.toThrow(/not-onnx.onnx is not an ONNX model/);
    await expect(checkSileroModel(model)).resolves.toBeUndefined();
  });
});
