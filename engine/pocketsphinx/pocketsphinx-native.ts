/**
 * Debian's pocketsphinx (0.8+5prealpha: `libpocketsphinx.so.3`, `libsphinxbase.so.3`) driven
 * in-process through koffi. Decoding is synchronous native code: only the recogniser's worker
 * thread uses this module, never the event loop.
 */
import koffi, { type LibraryHandle } from 'koffi';
import type { Hypothesis, RecognisedWord } from '../types.js';

/** pocketsphinx works in 10 ms frames (its default `-frate` of 100). */
const FRAME_SECONDS = 0.01;

type Pointer = object;

interface Native {
  ps_args(): Pointer;
  cmd_ln_init(inout: null, definitions: Pointer, strict: number, ...pairs: Array<string | null>): Pointer | null;
  cmd_ln_free_r(config: Pointer): number;
  err_set_logfp(file: null): void;
  ps_init(config: Pointer): Pointer | null;
  ps_free(decoder: Pointer): number;
  ps_get_logmath(decoder: Pointer): Pointer;
  logmath_exp(logmath: Pointer, value: number): number;
  ps_start_stream(decoder: Pointer): number;
  ps_start_utt(decoder: Pointer): number;
  ps_process_raw(decoder: Pointer, data: Int16Array, samples: number, noSearch: number, fullUtterance: number): number;
  ps_end_utt(decoder: Pointer): number;
  ps_get_hyp(decoder: Pointer, score: number[]): string | null;
  ps_seg_iter(decoder: Pointer): Pointer | null;
  ps_seg_next(segment: Pointer): Pointer | null;
  ps_seg_word(segment: Pointer): string;
  ps_seg_frames(segment: Pointer, start: number[], end: number[]): void;
  ps_seg_prob(segment: Pointer, acoustic: number[], language: number[], backoff: number[]): number;
  ps_set_search(decoder: Pointer, name: string): number;
  ps_set_jsgf_string(decoder: Pointer, name: string, grammar: string): number;
  ps_lookup_word(decoder: Pointer, word: string): Pointer | null;
  free(pointer: Pointer): void;
}

let native: Native | null = null;

/**
 * Loads the libraries once per thread and silences their logging (which would otherwise write
 * to stderr from native code).
 * @throws Error naming the Debian packages when the libraries are missing.
 */
export function loadPocketsphinxNative(): void {
  if (native) return;
  let sphinxbase: LibraryHandle;
  let pocketsphinx: LibraryHandle;
  try {
    sphinxbase = koffi.load('libsphinxbase.so.3');
    pocketsphinx = koffi.load('libpocketsphinx.so.3');
  } catch (error) {
    throw new Error(`pocketsphinx's libraries are missing (apt-get install libpocketsphinx3 pocketsphinx-en-us): ${(error as Error).message}`);
  }
  const libc = koffi.load('libc.so.6');
  const opaque = (name: string) => koffi.pointer(name, koffi.opaque());
  opaque('cmd_ln_t');
  opaque('arg_t');
  opaque('ps_decoder_t');
  opaque('ps_seg_t');
  opaque('logmath_t');
  opaque('FILE');
  const functions: Native = {
    ps_args: pocketsphinx.func('arg_t *ps_args()'),
    // Variadic: (type, value) pairs, ended by a NULL string. It copies every string it keeps
    // (cmd_ln_parse_r would keep pointers into koffi's temporary strings).
    cmd_ln_init: sphinxbase.func('cmd_ln_t *cmd_ln_init(cmd_ln_t *inout, arg_t *defn, int strict, ...)'),
    cmd_ln_free_r: sphinxbase.func('int cmd_ln_free_r(cmd_ln_t *config)'),
    err_set_logfp: sphinxbase.func('void err_set_logfp(FILE *file)'),
    ps_init: pocketsphinx.func('ps_decoder_t *ps_init(cmd_ln_t *config)'),
    ps_free: pocketsphinx.func('int ps_free(ps_decoder_t *decoder)'),
    ps_get_logmath: pocketsphinx.func('logmath_t *ps_get_logmath(ps_decoder_t *decoder)'),
    logmath_exp: sphinxbase.func('double logmath_exp(logmath_t *logmath, int value)'),
    ps_start_stream: pocketsphinx.func('int ps_start_stream(ps_decoder_t *decoder)'),
    ps_start_utt: pocketsphinx.func('int ps_start_utt(ps_decoder_t *decoder)'),
    ps_process_raw: pocketsphinx.func('int ps_process_raw(ps_decoder_t *decoder, const int16_t *data, size_t samples, int no_search, int full_utt)'),
    ps_end_utt: pocketsphinx.func('int ps_end_utt(ps_decoder_t *decoder)'),
    ps_get_hyp: pocketsphinx.func('const char *ps_get_hyp(ps_decoder_t *decoder, _Out_ int32_t *score)'),
    ps_seg_iter: pocketsphinx.func('ps_seg_t *ps_seg_iter(ps_decoder_t *decoder)'),
    ps_seg_next: pocketsphinx.func('ps_seg_t *ps_seg_next(ps_seg_t *segment)'),
    ps_seg_word: pocketsphinx.func('const char *ps_seg_word(ps_seg_t *segment)'),
    ps_seg_frames: pocketsphinx.func('void ps_seg_frames(ps_seg_t *segment, _Out_ int *start, _Out_ int *end)'),
    ps_seg_prob: pocketsphinx.func('int32_t ps_seg_prob(ps_seg_t *segment, _Out_ int32_t *acoustic, _Out_ int32_t *language, _Out_ int32_t *backoff)'),
    ps_set_search: pocketsphinx.func('int ps_set_search(ps_decoder_t *decoder, const char *name)'),
    ps_set_jsgf_string: pocketsphinx.func('int ps_set_jsgf_string(ps_decoder_t *decoder, const char *name, const char *grammar)'),
    // Returns a malloc'ed string (or NULL), freed below with libc's free.
    ps_lookup_word: pocketsphinx.func('void *ps_lookup_word(ps_decoder_t *decoder, const char *word)'),
    free: libc.func('void free(void *pointer)'),
  };
  functions.err_set_logfp(null);
  native = functions;
}

function lib(): Native {
  if (!native) throw new Error('loadPocketsphinxNative() must run first');
  return native;
}

/** Decoder settings as pocketsphinx command-line arguments (`-hmm`, `-lm`, `-beam`, …). */
export type DecoderArguments = Readonly<Record<string, string | number>>;

/** The search of the decoder's language model (pocketsphinx's default search name). */
const LANGUAGE_MODEL_SEARCH = '_default';
const VOCABULARY_SEARCH = 'vocabulary';

/** Fillers and sentence markers pocketsphinx puts between words. */
const NOT_A_WORD = /^(<s>|<\/s>|<sil>|\(NULL\)|\[[A-Z]+\]|\+\+.*\+\+)$/;

/** One pocketsphinx decoder: its model, dictionary and search, one utterance at a time. */
export class PocketsphinxDecoder {
  private decoder: Pointer | null;
  private config: Pointer | null;
  private readonly logmath: Pointer;
  private inUtterance = false;

  constructor(args: DecoderArguments) {
    const argv = Object.entries(args).flatMap(([name, value]) => [name, String(value)]);
    const pairs = [...argv.flatMap((value) => ['str', value]), 'str', null];
    const config = lib().cmd_ln_init(null, lib().ps_args(), 1, ...pairs);
    if (!config) throw new Error(`pocketsphinx refused its settings: ${argv.join(' ')}`);
    const decoder = lib().ps_init(config);
    if (!decoder) {
      lib().cmd_ln_free_r(config);
      throw new Error('pocketsphinx could not load its model (check -hmm, -lm and -dict)');
    }
    this.config = config;
    this.decoder = decoder;
    this.logmath = lib().ps_get_logmath(decoder);
  }

  private get handle(): Pointer {
    if (!this.decoder) throw new Error('the decoder is freed');
    return this.decoder;
  }

  /** Whether the dictionary knows a word. */
  knows(word: string): boolean {
    const pronunciation = lib().ps_lookup_word(this.handle, word);
    if (!pronunciation) return false;
    lib().free(pronunciation);
    return true;
  }

  /** Listens with the language model (`null`) or only for the sentences of a JSGF grammar. */
  useGrammar(jsgf: string | null): void {
    if (jsgf === null) {
      if (lib().ps_set_search(this.handle, LANGUAGE_MODEL_SEARCH) < 0) throw new Error('the decoder has no language model search');
      return;
    }
    // The grammar of an earlier stream is replaced while it is not the current search.
    if (lib().ps_set_search(this.handle, LANGUAGE_MODEL_SEARCH) < 0) throw new Error('the decoder has no language model search');
    if (lib().ps_set_jsgf_string(this.handle, VOCABULARY_SEARCH, jsgf) < 0) throw new Error('pocketsphinx refused the vocabulary grammar');
    if (lib().ps_set_search(this.handle, VOCABULARY_SEARCH) < 0) throw new Error('pocketsphinx could not switch to the vocabulary grammar');
  }

  start(): void {
    if (this.inUtterance) this.finish();
    // A new stream restarts the frame count, so word times count from this utterance's start.
    if (lib().ps_start_stream(this.handle) < 0 || lib().ps_start_utt(this.handle) < 0) throw new Error('pocketsphinx could not start an utterance');
    this.inUtterance = true;
  }

  process(pcm: Int16Array): void {
    if (!this.inUtterance || pcm.length === 0) return;
    if (lib().ps_process_raw(this.handle, pcm, pcm.length, 0, 0) < 0) throw new Error('pocketsphinx could not decode the audio');
  }

  /** The words so far (times from the utterance start); `null` before any word. */
  partial(): Hypothesis | null {
    if (!this.inUtterance) return null;
    const hypothesis = this.words();
    return hypothesis.text === '' ? null : hypothesis;
  }

  /** Ends the utterance and returns its words. */
  finish(): Hypothesis {
    if (!this.inUtterance) return { text: '', words: [] };
    this.inUtterance = false;
    if (lib().ps_end_utt(this.handle) < 0) throw new Error('pocketsphinx could not end the utterance');
    return this.words();
  }

  private words(): Hypothesis {
    const words: RecognisedWord[] = [];
    for (let segment = lib().ps_seg_iter(this.handle); segment; segment = lib().ps_seg_next(segment)) {
      const word = lib().ps_seg_word(segment);
      if (NOT_A_WORD.test(word)) continue;
      const start = [0];
      const end = [0];
      lib().ps_seg_frames(segment, start, end);
      const probability = lib().ps_seg_prob(segment, [0], [0], [0]);
      const conf = Math.min(1, Math.max(0, lib().logmath_exp(this.logmath, probability)));
      // Alternative pronunciations are marked "word(2)" in the dictionary.
      words.push({ w: word.replace(/\(\d+\)$/, ''), start: round(start[0]! * FRAME_SECONDS), end: round((end[0]! + 1) * FRAME_SECONDS), conf: round(conf) });
    }
    return { text: words.map((word) => word.w).join(' '), words };
  }

  /** Frees the native decoder; safe to call twice. */
  free(): void {
    if (this.decoder) lib().ps_free(this.decoder);
    if (this.config) lib().cmd_ln_free_r(this.config);
    this.decoder = null;
    this.config = null;
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
