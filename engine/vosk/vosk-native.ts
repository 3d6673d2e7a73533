/**
 * Vosk (`libvosk.so`, Kaldi inside; Apache-2.0) driven in-process through koffi. The library
 * comes from the `vosk` npm package, whose own JavaScript is never loaded (it needs ffi-napi,
 * which does not build on Node 20). Decoding is synchronous native code: only the recogniser's
 * worker threads use this module, never the event loop.
 *
 * Kaldi stops the whole process on an internal assertion (a malformed model file), so model
 * folders are checked by `vosk-model.ts` before they come here.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import koffi, { type LibraryHandle } from 'koffi';
import { phraseWords } from '../stt/phrases.js';
import type { Hypothesis, RecognisedWord } from '../types.js';

type Pointer = object;

interface Native {
  vosk_set_log_level(level: number): void;
  vosk_model_new(path: string): Pointer | null;
  vosk_model_free(model: Pointer): void;
  vosk_model_find_word(model: Pointer, word: string): number;
  vosk_recognizer_new(model: Pointer, sampleRate: number): Pointer | null;
  vosk_recognizer_new_grm(model: Pointer, sampleRate: number, grammar: string): Pointer | null;
  vosk_recognizer_set_words(recognizer: Pointer, words: number): void;
  vosk_recognizer_accept_waveform_s(recognizer: Pointer, data: Int16Array, length: number): number;
  vosk_recognizer_result(recognizer: Pointer): string;
  vosk_recognizer_partial_result(recognizer: Pointer): string;
  vosk_recognizer_final_result(recognizer: Pointer): string;
  vosk_recognizer_reset(recognizer: Pointer): void;
  vosk_recognizer_free(recognizer: Pointer): void;
}

let native: Native | null = null;

/** Where the `vosk` npm package keeps `libvosk.so` for this machine. */
export function bundledLibvoskPath(): string {
  const packageJson = createRequire(import.meta.url).resolve('vosk/package.json');
  return join(dirname(packageJson), 'lib', 'linux-x86_64', 'libvosk.so');
}

/**
 * Loads the library once per thread and silences Kaldi's logging (which would otherwise write
 * to stderr from native code).
 * @throws Error naming the package when the library cannot be loaded.
 */
export function loadVoskNative(libraryPath?: string): void {
  if (native) return;
  let library: LibraryHandle;
  try {
    library = koffi.load(libraryPath ?? bundledLibvoskPath());
  } catch (error) {
    throw new Error(`libvosk cannot be loaded (npm install vosk --ignore-scripts): ${(error as Error).message}`);
  }
  koffi.opaque('VoskModel');
  koffi.opaque('VoskRecognizer');
  const functions: Native = {
    vosk_set_log_level: library.func('void vosk_set_log_level(int level)'),
    vosk_model_new: library.func('VoskModel *vosk_model_new(const char *path)'),
    vosk_model_free: library.func('void vosk_model_free(VoskModel *model)'),
    vosk_model_find_word: library.func('int vosk_model_find_word(VoskModel *model, const char *word)'),
    vosk_recognizer_new: library.func('VoskRecognizer *vosk_recognizer_new(VoskModel *model, float sample_rate)'),
    vosk_recognizer_new_grm: library.func('VoskRecognizer *vosk_recognizer_new_grm(VoskModel *model, float sample_rate, const char *grammar)'),
    vosk_recognizer_set_words: library.func('void vosk_recognizer_set_words(VoskRecognizer *recognizer, int words)'),
    vosk_recognizer_accept_waveform_s: library.func('int vosk_recognizer_accept_waveform_s(VoskRecognizer *recognizer, const int16_t *data, int length)'),
    vosk_recognizer_result: library.func('const char *vosk_recognizer_result(VoskRecognizer *recognizer)'),
    vosk_recognizer_partial_result: library.func('const char *vosk_recognizer_partial_result(VoskRecognizer *recognizer)'),
    vosk_recognizer_final_result: library.func('const char *vosk_recognizer_final_result(VoskRecognizer *recognizer)'),
    vosk_recognizer_reset: library.func('void vosk_recognizer_reset(VoskRecognizer *recognizer)'),
    vosk_recognizer_free: library.func('void vosk_recognizer_free(VoskRecognizer *recognizer)'),
  };
  // -2: no information or warnings (phrases outside the vocabulary are left out here, not
  // reported by Kaldi); errors still reach stderr.
  functions.vosk_set_log_level(-2);
  native = functions;
}

function lib(): Native {
  if (!native) throw new Error('loadVoskNative() must run first');
  return native;
}

/** A loaded Kaldi model, shared by the recognisers of one thread. */
export class VoskModel {
  private model: Pointer | null;

  /** @throws Error when Vosk cannot load the folder. */
  constructor(readonly folder: string) {
    const model = lib().vosk_model_new(folder);
    if (!model) throw new Error(`Vosk could not load the model in ${folder}`);
    this.model = model;
  }

  get handle(): Pointer {
    if (!this.model) throw new Error('the model is freed');
    return this.model;
  }

  /** Whether the model's word list has a word. */
  knows(word: string): boolean {
    return lib().vosk_model_find_word(this.handle, word) >= 0;
  }

  free(): void {
    if (this.model) lib().vosk_model_free(this.model);
    this.model = null;
  }
}

/** One word of Vosk's result JSON (`set_words` on). */
interface VoskWord {
  readonly word: string;
  readonly start: number;
  readonly end: number;
  readonly conf?: number;
}

/** Kaldi's marker for speech outside the vocabulary or grammar. */
const UNKNOWN_WORD = '[unk]';

/**
 * One Vosk recogniser, one utterance at a time. Vosk ends segments by itself at long pauses
 * (its own endpointing); the segments of one utterance are joined here, so the utterance ends
 * where our voice activity detector says.
 */
export class VoskUtterance {
  private recognizer: Pointer | null = null;
  /** Words of the segments Vosk closed within this utterance. */
  private closedWords: RecognisedWord[] = [];
  /** Seconds of audio before this utterance that Vosk's times count from. */
  private timeBase = 0;
  private samplesFed = 0;
  private inUtterance = false;

  constructor(
    private readonly model: VoskModel,
    private readonly sampleRateHz: number,
    /** Whether `useVocabulary` may build a grammar (models with a dynamic graph). */
    private readonly grammarCapable: boolean,
  ) {
    this.recognizer = this.create(null);
  }

  private create(grammar: string | null): Pointer {
    const recognizer =
      grammar === null
        ? lib().vosk_recognizer_new(this.model.handle, this.sampleRateHz)
        : lib().vosk_recognizer_new_grm(this.model.handle, this.sampleRateHz, grammar);
    if (!recognizer) throw new Error('Vosk could not create a recogniser for the model');
    lib().vosk_recognizer_set_words(recognizer, 1);
    return recognizer;
  }

  private get handle(): Pointer {
    if (!this.recognizer) throw new Error('the recogniser is freed');
    return this.recognizer;
  }

  /**
   * Listens only for these phrases (as a grammar), or for anything (`[]`). Models without a
   * dynamic graph ignore vocabularies; their capabilities say so. Phrases with a word the
   * model lacks are left out.
   */
  useVocabulary(phrases: readonly string[]): void {
    const known = new Set<string>();
    if (this.grammarCapable) {
      for (const phrase of phrases) {
        const words = phraseWords(phrase);
        if (words.length > 0 && words.every((word) => this.model.knows(word))) known.add(words.join(' '));
      }
    }
    const grammar = known.size > 0 ? JSON.stringify([...known]) : null;
    const replacement = this.create(grammar);
    lib().vosk_recognizer_free(this.handle);
    this.recognizer = replacement;
    this.samplesFed = 0;
    this.timeBase = 0;
    this.inUtterance = false;
  }

  start(): void {
    if (this.inUtterance) this.finish();
    this.closedWords = [];
    this.timeBase = this.samplesFed / this.sampleRateHz;
    this.inUtterance = true;
  }

  process(pcm: Int16Array): void {
    if (!this.inUtterance || pcm.length === 0) return;
    const ended = lib().vosk_recognizer_accept_waveform_s(this.handle, pcm, pcm.length);
    if (ended < 0) throw new Error('Vosk could not decode the audio');
    this.samplesFed += pcm.length;
    if (ended === 1) this.closedWords.push(...this.words(parseResult(lib().vosk_recognizer_result(this.handle)).result));
  }

  /** The words so far (times from the utterance start); `null` before any word. */
  partial(): Hypothesis | null {
    if (!this.inUtterance) return null;
    // Partial word times (`set_partial_words`) arrive only seconds late, so partial words are
    // placed evenly over the audio heard; the final result has Kaldi's own word times.
    const inProgress = this.untimed(parsePartial(lib().vosk_recognizer_partial_result(this.handle)).partial ?? '');
    const words = [...this.closedWords, ...inProgress];
    return words.length === 0 ? null : { text: words.map((word) => word.w).join(' '), words };
  }

  /** Ends the utterance and returns its words. */
  finish(): Hypothesis {
    if (!this.inUtterance) return { text: '', words: [] };
    this.inUtterance = false;
    const words = [...this.closedWords, ...this.words(parseResult(lib().vosk_recognizer_final_result(this.handle)).result)];
    this.closedWords = [];
    return { text: words.map((word) => word.w).join(' '), words };
  }

  private words(list: readonly VoskWord[] | undefined): RecognisedWord[] {
    return (list ?? [])
      .filter((word) => word.word !== UNKNOWN_WORD)
      .map((word) => ({
        w: word.word,
        start: round(Math.max(0, word.start - this.timeBase)),
        end: round(Math.max(0, word.end - this.timeBase)),
        conf: round(Math.min(1, Math.max(0, word.conf ?? 1))),
      }));
  }

  /** Partial words without times: spread over the audio heard so far, confidence unknown (0). */
  private untimed(text: string): RecognisedWord[] {
    const list = text.split(' ').filter((word) => word !== '' && word !== UNKNOWN_WORD);
    const heard = this.samplesFed / this.sampleRateHz - this.timeBase;
    return list.map((w, i) => ({ w, start: round((heard * i) / list.length), end: round((heard * (i + 1)) / list.length), conf: 0 }));
  }

  /** Frees the recogniser; safe to call twice. */
  free(): void {
    if (this.recognizer) lib().vosk_recognizer_free(this.recognizer);
    this.recognizer = null;
  }
}

function parseResult(json: string): { result?: VoskWord[]; text?: string } {
  return JSON.parse(json) as { result?: VoskWord[]; text?: string };
}

/** `{"partial": …}` while an utterance is open; `{"text": ""}` before any audio. */
function parsePartial(json: string): { partial?: string } {
  return JSON.parse(json) as { partial?: string };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
