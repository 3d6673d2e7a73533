import type { BatchSttEngine, RecognisedWord, RecognitionResult, SttOptions } from '../types.js';

/** The sandbox transcript per base language: it says in its own words that it is synthetic. */
const SANDBOX_TEXT: Record<string, string> = {
  de: 'Synthetisches Sandbox-Transkript: hier wurde keine Sprache erkannt.',
  fr: "Transcription synthétique du bac à sable : aucune parole n'a été reconnue.",
  it: 'Trascrizione sintetica della sandbox: nessun parlato è stato riconosciuto.',
  en: 'Synthetic sandbox transcript: no speech was recognised.',
};

/** Confidence of every synthetic word: deliberately middling, nothing was recognised. */
const SANDBOX_CONFIDENCE = 0.5;

/**
 * The sandbox recogniser (spec 5.8): never listens to the audio beyond its length. It answers
 * in the first candidate language, with the words spread evenly over the real duration.
 */
export class SyntheticSttEngine implements BatchSttEngine {
  readonly id = 'synthetic';
  readonly capabilities;

  constructor(languages: readonly string[]) {
    this.capabilities = { languages, streaming: false };
  }

  async transcribe(samples: Float32Array, options: SttOptions, signal: AbortSignal): Promise<RecognitionResult> {
    signal.throwIfAborted();
    const lang = options.candidates[0];
    if (lang === undefined) throw new RangeError('at least one candidate language is required');
    const base = lang.slice(0, 2).toLowerCase();
    const text = SANDBOX_TEXT[base] ?? SANDBOX_TEXT['en']!;
    const durationSeconds = samples.length / options.sampleRateHz;
    const tokens = text.split(' ');
    const slot = durationSeconds / tokens.length;
    const words: RecognisedWord[] = tokens.map((w, i) => ({
      w,
      start: round(i * slot),
      end: round((i + 1) * slot),
      conf: SANDBOX_CONFIDENCE,
    }));
    return { text, words, lang, durationSeconds };
  }

  /**
   * The sandbox's partial result after `heardSeconds` of an utterance, as a live recogniser's
   * would come (spec 5.8: sandbox output has the shape of real output): the transcript's words
   * so far, one more every 250 ms of speech and never all of them (the final has them all).
   * Its first words say that it is synthetic.
   */
  partial(language: string, heardSeconds: number): { text: string; words: RecognisedWord[] } | null {
    const tokens = (SANDBOX_TEXT[language.slice(0, 2).toLowerCase()] ?? SANDBOX_TEXT['en']!).split(' ');
    const count = Math.min(tokens.length - 1, Math.floor(heardSeconds / PARTIAL_WORD_SECONDS));
    if (count < 1) return null;
    const slot = heardSeconds / count;
    const words = tokens.slice(0, count).map((w, i) => ({ w, start: round(i * slot), end: round((i + 1) * slot), conf: SANDBOX_CONFIDENCE }));
    return { text: words.map((word) => word.w).join(' '), words };
  }
}

/** Speech per word of a sandbox partial: the live recognisers' partial cadence. */
const PARTIAL_WORD_SECONDS = 0.25;

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
