/**
 * Intelligibility of live synthesis: English IVR commands synthesised by the API at 16 and
 * 8 kHz and recognised by pocketsphinx (Debian) listening for the menu's commands. Reports
 * word accuracy (1 − WER) and whole-command accuracy per voice.
 * Run: npm run bench (or: node --import tsx test/bench/roundtrip.bench.ts)
 */
import { VOICES } from '../../src/catalog/voices.js';
import { assertPocketsphinx, IVR_COMMANDS, recogniseCommand, wordErrors } from '../helpers/pocketsphinx.js';
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
        let errors = 0;
        let words = 0;
        let exact = 0;
        for (const command of IVR_COMMANDS) {
          const response = await t.app.inject({
            method: 'POST',
            url: '/v1/tts',
            headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' },
            // pocketsphinx's model is 16 kHz: 8 kHz audio is brought back up, as a phone line would.
            payload: { text: command, language: 'en', voice: voice.id, format: 'wav', sample_rate_hz: rateHz },
          });
          const wav = rateHz === 16000 ? response.rawPayload : await upsample(response.rawPayload);
          const heard = await recogniseCommand(wav, IVR_COMMANDS);
          const wrong = wordErrors(command, heard);
          errors += wrong;
          words += command.split(' ').length;
          if (wrong === 0) exact++;
        }
        figures.push({ voice: voice.id, rateHz, wordAccuracy: 1 - errors / words, commandAccuracy: exact / IVR_COMMANDS.length });
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
