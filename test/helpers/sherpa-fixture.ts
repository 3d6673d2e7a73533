/**
 * A sherpa-onnx recogniser on a hand-made model in a temporary folder, and eSpeak speech to
 * feed it: started before a test file's tests, closed after them (real models cannot be
 * downloaded on the test machines).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { SherpaSttEngine } from '../../engine/sherpa/sherpa-stt-engine.js';
import { SpeechAudio } from './speech-audio.js';

/** What the fixture holds once the file's `beforeAll` has run. */
export interface SherpaFixture {
  /** The temporary folder; its models are written by `start`. */
  readonly dir: string;
  readonly engine: SherpaSttEngine;
  readonly speech: SpeechAudio;
}

/** Registers the set-up and tear-down; `start` writes a model into the folder and starts the engine on it. */
export function sherpaFixture(prefix: string, start: (dir: string) => Promise<SherpaSttEngine>): SherpaFixture {
  const fixture: { dir: string; engine?: SherpaSttEngine; speech?: SpeechAudio } = { dir: '' };
  beforeAll(async () => {
    fixture.dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    fixture.engine = await start(fixture.dir);
    fixture.speech = await SpeechAudio.start();
  }, 60_000);
  afterAll(async () => {
    await fixture.engine?.close();
    await fixture.speech?.close();
    if (fixture.dir) await fs.rm(fixture.dir, { recursive: true, force: true });
  });
  return fixture as SherpaFixture;
}
