/**
 * Writes a minimal multilingual Whisper model (encoder, decoder, tokens) that sherpa-onnx
 * really loads and runs, both for spoken language identification and for offline recognition,
 * so the Whisper paths run in tests without a real model. The ONNX files are encoded by hand.
 *
 * What sherpa-onnx (1.13.x, offline-whisper-model.cc and friends) does with a Whisper model:
 * - It computes 80 Whisper log-mel features, normalises them the way Whisper does
 *   (`(max(log10(mel), global_max - 8) + 4) / 4`, so silence-free speech sits around 0..1.5),
 *   appends 1000 frames of ZEROS (tail padding; at least 50) and feeds the encoder `mel`
 *   as [N, 80, T]. The encoder returns `n_layer_cross_k` and `n_layer_cross_v`, which sherpa
 *   only hands on to the decoder, so their shape is ours to choose.
 * - The decoder takes (tokens [N, n], in_n_layer_self_k_cache, in_n_layer_self_v_cache,
 *   n_layer_cross_k, n_layer_cross_v, offset [1]) by position and returns (logits [N, n, V],
 *   out_n_layer_self_k_cache, out_n_layer_self_v_cache). sherpa reads only the logits of the
 *   last position.
 * - Language identification feeds [sot] once and picks, among `all_language_tokens` only,
 *   the one with the highest logit (ties: the first listed wins).
 * - Recognition feeds [sot, language, task, no_timestamps] (English-only models: [sot,
 *   no_timestamps]), then one token per step, greedily, until `eot` or about 6 tokens per
 *   second of audio. tokens.txt lists only text tokens as "<base64 bytes> <id>"; special
 *   tokens are not in it and never reach the text.
 * - All encoder metadata below except the descriptive ones is read without a default: a
 *   missing key makes sherpa-onnx log "'<key>' does not exist in the metadata" and _Exit(-1)
 *   the whole process (exit status 255) in the constructor; all_language_tokens and
 *   all_language_codes only when is_multilingual is 1. Language identification also needs
 *   `model_type` to start with "whisper": without it the constructor returns and
 *   createStream() crashes the process (SIGSEGV, status 139). Language identification with
 *   an English-only model (is_multilingual 0) ends the process in the constructor (255,
 *   "Only whisper multilingual models can be used for spoken language identification").
 *   A recogniser told a language the model lacks ends the process in decode() (255,
 *   "Invalid language: xx"). Measured with sherpa-onnx-node 1.13.8.
 *
 * The rules this model follows (bands are mel bins; the value of a band is the largest
 * normalised log-mel value in it over all frames, tail padding included, so it is >= 0):
 *   low  = bins  0..19  (about    0 -  780 Hz)
 *   mid  = bins 20..43  (about  780 - 2000 Hz)
 *   high = bins 44..79  (about 2000 - 8000 Hz)
 * - Language: logit(de) = low, logit(it) = mid, logit(fr) = high, logit(en) = 0.5,
 *   logit(es) = -100. So a clearly audible 200-300 Hz tone reads as 'de', a 1 kHz tone as
 *   'it', a 3-4 kHz tone as 'fr', and silence or very quiet audio (no band above 0.5) as 'en'.
 *   'es' is never detected but may be asked for. The strongest band wins, so speech (eSpeak
 *   voices, whose harmonics peak below 780 Hz) reads as 'de' whatever language it is in.
 * - Speech: the audio is "loud" when some band exceeds 0.5. Measured: a sine reaches 0.5 at
 *   amplitude about 0.007 (250 Hz, 1 kHz) or 0.013 (3.5 kHz); a band's value grows by 0.5 per
 *   tenfold amplitude, so amplitude 0.3 gives about 1.3 and 0.003 stays quiet. Use tones of
 *   amplitude >= 0.05 for "loud" and <= 0.002 (or zeros) for "quiet".
 *   Then the decoder writes one word, the language's word, and then end-of-text:
 *   en " hello", de " hallo", es " hola", fr " bonjour", it " ciao" (with Whisper's leading
 *   space; sherpa's result `text` comes back trimmed, `tokens` keep it); task translate writes
 *   " hello". Quiet audio writes end-of-text at once: "". The English-only variant
 *   (`multilingual: false`) always writes " hello" and reports lang "". sherpa allows about 6
 *   tokens per second of audio, so audio shorter than 0.17 s gives "" even when loud.
 *   With language '' the recogniser first detects the language by the rule above.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOAT, INT64, node, onnxModel, tensor, valueInfo } from './onnx-writer.js';

/** Language codes in the order of `all_language_tokens` (Whisper's order: en first). */
export const TINY_WHISPER_LANGUAGES = ['en', 'de', 'es', 'fr', 'it'] as const;
export type TinyWhisperLanguage = (typeof TINY_WHISPER_LANGUAGES)[number];

/** The word a loud stretch reads as, per language (text tokens carry Whisper's leading space). */
export const TINY_WHISPER_WORDS: Readonly<Record<TinyWhisperLanguage, string>> = { en: 'hello', de: 'hallo', es: 'hola', fr: 'bonjour', it: 'ciao' };

/** A band's value above which the audio counts as speech, and below which the language is 'en'. */
export const TINY_WHISPER_LOUD = 0.5;

/** Mel-bin ranges [start, end) of the low, mid and high bands (de, it, fr). */
const BANDS: ReadonlyArray<readonly [number, number]> = [
  [0, 20],
  [20, 44],
  [44, 80],
];

// Token ids. Text tokens first (as in Whisper), then the special tokens in Whisper's order.
const WORD_ID: Readonly<Record<TinyWhisperLanguage, number>> = { en: 0, de: 1, es: 2, fr: 3, it: 4 };
const BLANK = 5; // " ", Whisper's blank_id
const EOT = 6;
const SOT = 7;
const LANG_ID: Readonly<Record<TinyWhisperLanguage, number>> = { en: 8, de: 9, es: 10, fr: 11, it: 12 };
const TRANSLATE = 13;
const TRANSCRIBE = 14;
const SOT_LM = 15;
const SOT_PREV = 16;
const NO_SPEECH = 17;
const NO_TIMESTAMPS = 18;
const VOCAB = 19; // timestamp tokens would start at no_timestamps + 1 = 19: there are none
const TEXT_CTX = 448; // as Whisper; bounds the self-attention cache sherpa allocates
const TEXT_LAYERS = 1;
const STATE = BANDS.length; // n_text_state: the cross "keys" are the three band values

/** Encoder metadata as scripts/whisper/export-onnx.py writes it. */
function encoderMetadata(multilingual: boolean): Record<string, string> {
  const languageTokens = TINY_WHISPER_LANGUAGES.map((l) => LANG_ID[l]);
  return {
    model_type: 'whisper-tiny-test', // language identification insists on a "whisper" prefix
    version: '1',
    maintainer: 'sprachrohr-tests',
    n_mels: '80', // language identification always computes 80 bins
    n_audio_ctx: '1',
    n_audio_state: String(STATE),
    n_audio_head: '1',
    n_audio_layer: '1',
    n_vocab: String(VOCAB),
    n_text_ctx: String(TEXT_CTX),
    n_text_state: String(STATE),
    n_text_head: '1',
    n_text_layer: String(TEXT_LAYERS),
    sot_sequence: (multilingual ? [SOT, LANG_ID.en, TRANSCRIBE] : [SOT]).join(','),
    all_language_tokens: languageTokens.join(','),
    all_language_codes: TINY_WHISPER_LANGUAGES.join(','),
    sot: String(SOT),
    sot_index: '0',
    eot: String(EOT),
    blank_id: String(BLANK),
    is_multilingual: multilingual ? '1' : '0',
    no_speech: String(NO_SPEECH),
    transcribe: String(TRANSCRIBE),
    translate: String(TRANSLATE),
    sot_prev: String(SOT_PREV),
    sot_lm: String(SOT_LM),
    no_timestamps: String(NO_TIMESTAMPS),
  };
}

/**
 * Encoder: mel [N, 80, T] -> n_layer_cross_k = n_layer_cross_v = [1, N, 1, 3], the largest
 * value of each band over frequency and time.
 */
export function buildTinyWhisperEncoderOnnx(options: { multilingual?: boolean; omitMetadata?: readonly string[] } = {}): Buffer {
  const nodes: Buffer[][] = [];
  const initializers: Buffer[][] = [tensor('bin_axis', INT64, [1], [1]), tensor('layer_axis', INT64, [1], [0])];
  BANDS.forEach(([start, end], b) => {
    initializers.push(tensor(`band${b}_start`, INT64, [1], [start]), tensor(`band${b}_end`, INT64, [1], [end]));
    nodes.push(
      node('Slice', ['mel', `band${b}_start`, `band${b}_end`, 'bin_axis'], [`band${b}`]), // [N, bins, T]
      node('ReduceMax', [`band${b}`], [`band${b}_max`], { axes: [1, 2], keepdims: 1 }), // [N, 1, 1]
    );
  });
  nodes.push(
    node(
      'Concat',
      BANDS.map((_, b) => `band${b}_max`),
      ['bands'],
      { axis: 2 },
    ), // [N, 1, 3]
    node('Unsqueeze', ['bands', 'layer_axis'], ['n_layer_cross_k']), // [1, N, 1, 3]
    node('Identity', ['n_layer_cross_k'], ['n_layer_cross_v']),
  );
  const metadata = encoderMetadata(options.multilingual ?? true);
  for (const key of options.omitMetadata ?? []) delete metadata[key];
  return onnxModel({
    graphName: 'tiny_whisper_encoder',
    nodes,
    initializers,
    inputs: [valueInfo('mel', FLOAT, ['N', 80, 'T'])],
    outputs: [valueInfo('n_layer_cross_k', FLOAT, [TEXT_LAYERS, 'N', 'A', STATE]), valueInfo('n_layer_cross_v', FLOAT, [TEXT_LAYERS, 'N', 'A', STATE])],
    metadata,
    opset: 13,
  });
}

/**
 * The decoder's logits are the same at every position:
 *   logits = min(sum over the input tokens of TRANSITIONS[token], CAPS) + AUDIO(bands)
 * where CAPS is 0 for the words (no lift takes a word above end-of-text) and 1e4 otherwise.
 * The sum over the prompt [sot, language, task, no_timestamps] lets the language token pick
 * the word; a later call sees just the word and answers end-of-text. AUDIO adds the language
 * scores (read only at [sot]) and the speech evidence for the words.
 */
function transitions(multilingual: boolean): number[] {
  const t = Array.from({ length: VOCAB }, () => new Array<number>(VOCAB).fill(0));
  const words = Object.values(WORD_ID);
  const specials = [BLANK, SOT, ...Object.values(LANG_ID), TRANSLATE, TRANSCRIBE, SOT_LM, SOT_PREV, NO_SPEECH, NO_TIMESTAMPS];
  // The prompt ends in no_timestamps: words start 50 behind end-of-text, and nothing but a
  // word or end-of-text can win (the language scores AUDIO adds are small).
  for (const w of words) t[NO_TIMESTAMPS]![w] = -50;
  for (const s of specials) t[NO_TIMESTAMPS]![s] = -1000;
  // The language token lifts its word back level with end-of-text; the speech evidence decides.
  for (const l of TINY_WHISPER_LANGUAGES) t[LANG_ID[l]]![WORD_ID[l]] = 50;
  // Translating lifts " hello" and sinks every other word (the decoder caps word scores at 0
  // after the sum, so " hello" ends level with end-of-text whatever the language).
  for (const w of words) t[TRANSLATE]![w] = w === WORD_ID.en ? 100 : -100;
  // English-only models have no language token in the prompt: sot stands for English.
  if (!multilingual) t[SOT]![WORD_ID.en] = 50;
  // After a word comes end-of-text, whatever the audio.
  for (const w of words) {
    t[w]![EOT] = 1000;
    for (const s of specials) t[w]![s] = -1000;
  }
  return t.flat();
}

/** AUDIO as a matrix over [low, mid, high, loud] plus a bias, each giving V logits. */
function audioWeights(): { weights: number[]; bias: number[] } {
  const rows = 4; // low, mid, high, loud = max(low, mid, high)
  const w = Array.from({ length: rows }, () => new Array<number>(VOCAB).fill(0));
  const bias = new Array<number>(VOCAB).fill(0);
  // Language scores: one band each; 'en' is the constant floor; 'es' never wins.
  w[0]![LANG_ID.de] = 1;
  w[1]![LANG_ID.it] = 1;
  w[2]![LANG_ID.fr] = 1;
  bias[LANG_ID.en] = TINY_WHISPER_LOUD;
  bias[LANG_ID.es] = -100;
  // Speech evidence for every word: 10 * (loud - 0.5), positive only when some band is loud.
  for (const word of Object.values(WORD_ID)) {
    w[3]![word] = 10;
    bias[word] = -10 * TINY_WHISPER_LOUD;
  }
  return { weights: w.flat(), bias };
}

/** Decoder: the six inputs and three outputs sherpa-onnx binds by position. */
export function buildTinyWhisperDecoderOnnx(options: { multilingual?: boolean } = {}): Buffer {
  const { weights, bias } = audioWeights();
  const nodes = [
    // Band values from the cross keys: max over layers and audio positions -> [N, 3].
    node('ReduceMax', ['n_layer_cross_k'], ['bands'], { axes: [0, 2], keepdims: 0 }),
    node('ReduceMax', ['bands'], ['loud'], { axes: [1], keepdims: 1 }), // [N, 1]
    node('Concat', ['bands', 'loud'], ['evidence'], { axis: 1 }), // [N, 4]
    node('MatMul', ['evidence', 'audio_weights'], ['audio_scaled']), // [N, V]
    node('Add', ['audio_scaled', 'audio_bias'], ['audio']),
    node('Unsqueeze', ['audio', 'position_axis'], ['audio3']), // [N, 1, V]
    node('Gather', ['transitions', 'tokens'], ['rows'], { axis: 0 }), // [N, n, V]
    node('ReduceSum', ['rows', 'position_axis'], ['prompt_sum'], { keepdims: 1 }), // [N, 1, V]
    node('Min', ['prompt_sum', 'caps'], ['prompt']), // word scores at most 0, see transitions()
    node('Add', ['prompt', 'audio3'], ['scores']),
    node('Shape', ['rows'], ['logits_shape']),
    node('Expand', ['scores', 'logits_shape'], ['logits']), // [N, n, V], equal rows
    // The self-attention cache is handed back unchanged; this model attends to nothing.
    node('Identity', ['in_n_layer_self_k_cache'], ['out_n_layer_self_k_cache']),
    node('Identity', ['in_n_layer_self_v_cache'], ['out_n_layer_self_v_cache']),
  ];
  const initializers = [
    tensor('transitions', FLOAT, [VOCAB, VOCAB], transitions(options.multilingual ?? true)),
    tensor('audio_weights', FLOAT, [4, VOCAB], weights),
    tensor('audio_bias', FLOAT, [VOCAB], bias),
    tensor('position_axis', INT64, [1], [1]),
    tensor(
      'caps',
      FLOAT,
      [VOCAB],
      Array.from({ length: VOCAB }, (_, v) => (Object.values(WORD_ID).includes(v) ? 0 : 1e4)),
    ),
  ];
  const cache = [TEXT_LAYERS, 'N', TEXT_CTX, STATE];
  return onnxModel({
    graphName: 'tiny_whisper_decoder',
    nodes,
    initializers,
    // n_layer_cross_v and offset are accepted (sherpa passes them) but not used.
    inputs: [
      valueInfo('tokens', INT64, ['N', 'n']),
      valueInfo('in_n_layer_self_k_cache', FLOAT, cache),
      valueInfo('in_n_layer_self_v_cache', FLOAT, cache),
      valueInfo('n_layer_cross_k', FLOAT, [TEXT_LAYERS, 'N', 'A', STATE]),
      valueInfo('n_layer_cross_v', FLOAT, [TEXT_LAYERS, 'N', 'A', STATE]),
      valueInfo('offset', INT64, [1]),
    ],
    outputs: [
      valueInfo('logits', FLOAT, ['N', 'n', VOCAB]),
      valueInfo('out_n_layer_self_k_cache', FLOAT, cache),
      valueInfo('out_n_layer_self_v_cache', FLOAT, cache),
    ],
    metadata: {}, // the export script writes metadata to the encoder only
    opset: 13,
  });
}

/** tokens.txt: text tokens only, "<base64 of the token's bytes> <id>", as the export script writes. */
export function tinyWhisperTokens(): string {
  const text: Array<[string, number]> = [...TINY_WHISPER_LANGUAGES.map((l): [string, number] => [` ${TINY_WHISPER_WORDS[l]}`, WORD_ID[l]]), [' ', BLANK]];
  return text.map(([t, id]) => `${Buffer.from(t, 'utf8').toString('base64')} ${id}\n`).join('');
}

/**
 * Writes `tiny-encoder.onnx`, `tiny-decoder.onnx` and `tiny-tokens.txt` into `dir`.
 * `multilingual: false` gives an English-only model (is_multilingual 0); `omitMetadata`
 * drops encoder metadata keys (sherpa-onnx then ends the process on load).
 */
export async function writeTinyWhisperModel(
  dir: string,
  options: { multilingual?: boolean; omitMetadata?: string[] } = {},
): Promise<{ encoder: string; decoder: string; tokens: string }> {
  await mkdir(dir, { recursive: true });
  const encoder = join(dir, 'tiny-encoder.onnx');
  const decoder = join(dir, 'tiny-decoder.onnx');
  const tokens = join(dir, 'tiny-tokens.txt');
  await writeFile(encoder, buildTinyWhisperEncoderOnnx(options));
  await writeFile(decoder, buildTinyWhisperDecoderOnnx(options));
  await writeFile(tokens, tinyWhisperTokens(), 'utf8');
  return { encoder, decoder, tokens };
}
