/**
 * Intelligibility of live synthesis: English IVR commands synthesised by the API at 16 and
 * 8 kHz and recognised by pocketsphinx (Debian) listening for the menu's commands. Reports
 * word accuracy (1 − WER) and whole-command accuracy per voice.
 * Run: npm run bench (or: node --import tsx test/bench/roundtrip.bench.ts)
 */
import { VOICES } from '../../src/catalog/voices.js';
import { assertPocketsphinx, IVR_COMMANDS, scoreCommands } from '../helpers/pocketsphinx.js';
import { createTestApp } from '../helpers/test-app.js';

export interface RoundTripFigure {
  voice: string;
  rateHz: number;
  wordAccuracy: number;
  commandAccuracy: number;
}

/** Synthesises every command with every voice and scores what pocketsphinx hears. */
export async function benchRoundTrip(): Promise<RoundTripFigure[]> {
  await assertPocketsphinx();
  const t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak' });
  const figures: RoundTripFigure[] = [];
  try {
    for (const rateHz of [16000, 8000]) {
      for (const voice of VOICES) {
        const score = await scoreCommands(
          async (command) =>
            (
              await t.app.inject({
                method: 'POST',
                url: '/v1/tts',
                headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' },
                payload: { text: command, language: 'en', voice: voice.id, format: 'wav', sample_rate_hz: rateHz },
              })
            ).rawPayload,
          // pocketsphinx's model is 16 kHz: 8 kHz audio is brought back up, as a phone line would.
          rateHz === 16000 ? undefined : upsample,
        );
        figures.push({ voice: voice.id, rateHz, wordAccuracy: 1 - score.errors / score.words, commandAccuracy: score.exact / IVR_COMMANDS.length });
      }
    }
  } finally {
    await t.close();
  }
  return figures;
}

/** 8 kHz WAV to 16 kHz WAV with ffmpeg (the test's independent tool). */
async function upsample(wav: Buffer): Promise<Buffer> {
  const { convertWithFfmpeg } = await import('../helpers/ffmpeg.js');
  return convertWithFfmpeg(wav, 'up.wav', ['-ar', '16000', '-c:a', 'pcm_s16le']);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await benchRoundTrip()) console.log(f);
}
