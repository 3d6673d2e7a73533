/**
 * Installed recognition models, measured: word error rate per engine and set (English: Debian's
 * real recordings and eSpeak IVR sentences; German, French, Italian: IVR sentences spoken by
 * eSpeak NG), each at 16 kHz and as 8 kHz µ-law telephone audio through the same
 * decode-and-resample path as `POST /v1/stt`, and each engine's batch real-time factor.
 * Models come from SPRACHROHR_MODELS_DIR; without it (our build machines can download none),
 * it says so and measures nothing.
 * Run: SPRACHROHR_MODELS_DIR=data/models npm run bench
 *   (or: node --single-threaded-gc --import tsx test/bench/stt-models.bench.ts)
 */
import { performance } from 'node:perf_hooks';
import { startInstalledModels, type RunningRecogniser } from '../../engine/models/installed-engines.js';
import type { LiveRecognisers } from '../../engine/registry.js';
import { LANGUAGES } from '../../src/catalog/languages.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { decodeRecording } from '../../src/speech/recognition-service.js';
import { recognizeLive } from '../../src/speech/live-recognition.js';
import { wordErrors } from '../helpers/pocketsphinx.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { debianRecordings, IVR_SENTENCES, telephoneWav, wav, type Item } from './stt.bench.js';

const RATE = 16000;

/** IVR sentences per language (written for this benchmark). */
const SENTENCES: Record<string, readonly string[]> = {
  en: IVR_SENTENCES,
  de: [
    'ich möchte meine rechnung bezahlen',
    'wie sind ihre öffnungszeiten',
    'bitte verbinden sie mich mit einem mitarbeiter',
    'ich möchte meine bestellung stornieren',
    'mein internet funktioniert nicht',
    'können sie das bitte wiederholen',
    'ja das ist richtig',
    'nein danke',
  ],
  fr: [
    'je voudrais payer ma facture',
    'quelles sont vos heures d’ouverture',
    'passez-moi un conseiller s’il vous plaît',
    'je veux annuler ma commande',
    'ma connexion internet ne fonctionne pas',
    'pouvez-vous répéter s’il vous plaît',
    'oui c’est exact',
    'non merci',
  ],
  it: [
    'vorrei pagare la mia bolletta',
    'quali sono i vostri orari di apertura',
    'mi passi un operatore per favore',
    'voglio annullare il mio ordine',
    'la mia connessione internet non funziona',
    'può ripetere per favore',
    'sì è corretto',
    'no grazie',
  ],
};

const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);

export interface ModelFigures {
  readonly engine: string;
  readonly rows: Array<{ set: string; audio: string; words: number; wer: number }>;
  readonly batchRtf: number;
}

/** Measures every installed recogniser; an empty list when none is installed. */
export async function benchInstalledModels(modelsDir = process.env['SPRACHROHR_MODELS_DIR']): Promise<ModelFigures[]> {
  if (!modelsDir) return [];
  const installed = await startInstalledModels(
    modelsDir,
    LANGUAGES.map((language) => language.code),
    1,
  );
  const speech = await SpeechAudio.start();
  const figures: ModelFigures[] = [];
  try {
    for (const engine of installed.recognisers) figures.push(await benchEngine(engine, speech, installed.languageId));
  } finally {
    await speech.close();
    await installed.close();
  }
  return figures;
}

async function benchEngine(engine: RunningRecogniser, speech: SpeechAudio, languageId: LiveRecognisers['languageId']): Promise<ModelFigures> {
  const recognisers: LiveRecognisers = {
    engines: [engine],
    engineFor: () => engine,
    languages: engine.capabilities.languages,
    unavailable: [],
    languageId,
    voiceActivity: 'webrtc',
  };
  const rows: ModelFigures['rows'] = [];
  let processing = 0;
  let audioSeconds = 0;
  for (const base of Object.keys(SENTENCES)) {
    const language = engine.capabilities.languages.find((code) => code === base || code.startsWith(`${base}-`));
    if (!language) continue;
    const sets: Array<[string, Item[]]> = [];
    if (base === 'en') sets.push(['Debian test recordings (11 real, 96 words)', debianRecordings()]);
    const spoken: Item[] = [];
    for (const [index, sentence] of SENTENCES[base]!.entries())
      spoken.push({ id: `${base}-${index}`, reference: sentence, pcm: await speech.speak(sentence, RATE, base, index % 2 ? 'jonas' : 'anna') });
    sets.push([`IVR sentences by eSpeak NG (${base}, ${spoken.length})`, spoken]);
    for (const [set, items] of sets) {
      for (const audio of ['16 kHz', '8 kHz µ-law'] as const) {
        let errors = 0;
        let total = 0;
        for (const item of items) {
          const padded = concatPcm([silencePcm(0.3, RATE), item.pcm, silencePcm(0.6, RATE)]);
          const started = performance.now();
          const decoded = await decodeRecording(audio === '16 kHz' ? wav(padded, RATE) : telephoneWav(padded));
          const result = await recognizeLive(recognisers, decoded, { candidates: [language], vocabulary: [] }, new AbortController().signal);
          if (audio === '16 kHz') {
            processing += performance.now() - started;
            audioSeconds += decoded.durationSeconds;
          }
          errors += wordErrors(words(item.reference).join(' '), words(result.text).join(' '));
          total += words(item.reference).length;
        }
        rows.push({ set, audio, words: total, wer: errors / total });
      }
    }
  }
  return { engine: engine.id, rows, batchRtf: audioSeconds > 0 ? processing / 1000 / audioSeconds : NaN };
}

/** Prints the figures as docs/performance.md shows it. */
export function printModelFigures(figures: ModelFigures[]): void {
  if (figures.length === 0) {
    console.log('\nInstalled recognition models: none (set SPRACHROHR_MODELS_DIR to measure them).');
    return;
  }
  console.log('\nInstalled recognition models (one worker each, open vocabulary):');
  console.log('| engine | set | audio | words | WER |');
  console.log('|---|---|---|---|---|');
  for (const figure of figures)
    for (const row of figure.rows) console.log(`| ${figure.engine} | ${row.set} | ${row.audio} | ${row.words} | ${(row.wer * 100).toFixed(1)} % |`);
  for (const figure of figures) console.log(`${figure.engine}: batch real-time factor ${figure.batchRtf.toFixed(3)} (16 kHz sets)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printModelFigures(await benchInstalledModels());
}
