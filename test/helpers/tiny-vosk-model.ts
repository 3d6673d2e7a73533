/**
 * Writes a tiny, hand-made Kaldi/Vosk model folder that libvosk (npm `vosk`
 * 0.3.x) really loads and decodes with, so the Vosk adapter can be tested
 * without downloading a real model.
 *
 * What it recognises (deterministic: dither is off):
 *   - every stretch of LOUD audio (frame energy above about -48 dBFS for a
 *     sine at 16 kHz, i.e. MFCC log-energy c0 > TINY_VOSK_ENERGY_THRESHOLD)
 *     becomes ONE word "hello".  A word lasts at least
 *     TINY_VOSK_MIN_WORD_FRAMES decoder frames (30 ms each), but the decoder
 *     may borrow a neighbouring quiet frame, so even a 0.1 s click is
 *     "hello"; use >= 0.3 s of loud audio in tests.
 *   - quiet audio (-60 dBFS) and digital silence give nothing (text "").
 *   So 0.5 s silence + 0.5 s 440 Hz tone at -10 dBFS + 0.5 s silence gives
 *   {"text":"hello"}; with words on: start 0.48, end 1.02, conf 1.
 *   Loud stretches separated by silence give "hello hello".
 *   Vosk resamples recognisers whose rate is above the model's (44.1/48 kHz
 *   work); a lower rate makes accept_waveform return -1 (see sampleRate).
 *
 * The layout is the "v2" one that Vosk's Model constructor looks for:
 *   am/final.mdl        TransitionModel + AmNnetSimple, Kaldi TEXT format
 *   conf/model.conf     decoder / endpoint / decodable options
 *   conf/mfcc.conf      MFCC options (dither off => deterministic)
 *   graph/words.txt     word symbol table
 *   graph/phones/word_boundary.int   so Vosk can word-align (word times)
 *   static graph (default):   graph/HCLG.fst
 *   dynamic graph (option):   graph/HCLr.fst + graph/Gr.fst + graph/disambig_tid.int
 * There is no ivector/ folder (Vosk then runs without i-vectors) and no
 * rescore/ or rnnlm/ folder.
 *
 * How it works:
 *   - Features: 13 MFCCs with use-energy=true, so feature 0 is the raw log
 *     frame energy (ln of the sum of squared int16 samples over 400 samples).
 *     Digital silence gives ln(FLT_EPSILON) ~ -15.9, a -10 dBFS tone ~ 23.8.
 *   - Acoustic model: an nnet3 with one FixedAffineComponent (13 -> 2) and a
 *     LogSoftmaxComponent.  Output 0 ("silence" pdf) and output 1 ("speech"
 *     pdf) differ by (c0 - threshold) * TINY_VOSK_ENERGY_SLOPE, so the nnet is
 *     a soft energy detector.  No context, so the looped decodable is trivial.
 *   - Transition model: two phones (1 = SIL, 2 = SPEECH) sharing a one-state
 *     HMM topology; phone 1 uses pdf 0, phone 2 uses pdf 1.  Transition ids:
 *       1 = SIL self-loop, 2 = SIL forward (final), 3 = SPEECH self-loop,
 *       4 = SPEECH forward (final).
 *   - Graph: an OpenFst binary VectorFst ("vector"/"standard").  Its input
 *     labels are transition ids, outputs are word ids.  Paths follow Kaldi's
 *     "reordered" self-loop convention (each phone instance is its forward
 *     transition first, then self-loops), which is what Kaldi's lattice word
 *     aligner (reorder=true) expects.  "hello" is a single SPEECH phone of at
 *     least TINY_VOSK_MIN_WORD_FRAMES decoder frames.
 *   - frame-subsampling-factor is 3 because Vosk hard-codes 0.03 s per decoder
 *     frame when it converts word times to seconds.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Word symbol table (id = index). "world" is only reachable in the dynamic graph. */
export const TINY_VOSK_WORDS = ['<eps>', 'hello', 'world', '[unk]'] as const;
/** The word that loud audio is recognised as (static graph and default Gr.fst). */
export const TINY_VOSK_WORD = 'hello';
/** MFCC log-energy (c0) where silence and speech are equally likely. */
export const TINY_VOSK_ENERGY_THRESHOLD = 15;
/** Nats of log-likelihood difference per unit of c0 above/below the threshold. */
export const TINY_VOSK_ENERGY_SLOPE = 2;
/** Minimum length of a word in decoder frames (30 ms each). */
export const TINY_VOSK_MIN_WORD_FRAMES = 5;
/** Graph cost (nats) of emitting one word; keeps one word per loud stretch. */
const WORD_PENALTY = 2;

const NUM_CEPS = 13;
// Transition ids, derived by Kaldi from the topology below: for each
// (phone, hmm-state) tuple in order, one id per transition of that state in
// the order the transitions are listed (self-loop first, then forward).
const TID_SIL_SELF = 1;
const TID_SIL_FWD = 2;
const TID_SPEECH_SELF = 3;
const TID_SPEECH_FWD = 4;
const SELF_LOOP_PROB = 0.75; // only used by Kaldi's sanity checks (log-probs <= 0)

const wordId = (w: (typeof TINY_VOSK_WORDS)[number]): number => TINY_VOSK_WORDS.indexOf(w);

// ---------------------------------------------------------------- am/final.mdl
// Kaldi's Input() sniffs "\0B" for binary; anything else is read as text, which
// is whitespace-separated tokens.  ReadToken() requires whitespace after every
// token, hence the trailing spaces/newlines.
function kaldiVector(values: number[]): string {
  return ` [ ${values.map(num).join(' ')} ]\n`;
}
function kaldiMatrix(rows: number[][]): string {
  // Text matrices are "[", one row per line, and "]" at the end of the last row.
  return ` [\n${rows.map((r) => `  ${r.map(num).join(' ')}`).join('\n')} ]\n`;
}
function num(v: number): string {
  return String(v); // shortest round-trip form; istream >> float reads it
}

function transitionModelText(): string {
  const selfLp = Math.log(SELF_LOOP_PROB);
  const fwdLp = Math.log(1 - SELF_LOOP_PROB);
  return (
    '<TransitionModel> \n' +
    '<Topology> \n' +
    // One entry for both phones: emitting state 0 (pdf-class 0) with a
    // self-loop and a transition to the non-emitting final state 1.  Kaldi
    // requires >= 2 states and a final state without transitions or pdf.
    '<TopologyEntry> \n' +
    '<ForPhones> \n1 2 \n</ForPhones> \n' +
    `<State> 0 <PdfClass> 0 <Transition> 0 ${SELF_LOOP_PROB} <Transition> 1 ${1 - SELF_LOOP_PROB} </State> \n` +
    '<State> 1 </State> \n' +
    '</TopologyEntry> \n' +
    '</Topology> \n' +
    // (phone, hmm-state, pdf): must be sorted, Kaldi binary-searches them.
    '<Triples> 2 \n1 0 0 \n2 0 1 \n</Triples> \n' +
    // One-based array indexed by transition id; element 0 is unused.
    '<LogProbs> \n' +
    kaldiVector([0, selfLp, fwdLp, selfLp, fwdLp]) +
    '</LogProbs> \n' +
    '</TransitionModel> \n'
  );
}

function nnetText(): string {
  const a = TINY_VOSK_ENERGY_SLOPE;
  const t = TINY_VOSK_ENERGY_THRESHOLD;
  const zeros = new Array<number>(NUM_CEPS - 1).fill(0);
  // logits: silence = -a/2 (c0 - t), speech = +a/2 (c0 - t); only c0 matters.
  const linear = [
    [-a / 2, ...zeros],
    [a / 2, ...zeros],
  ];
  const bias = [(a * t) / 2, (-a * t) / 2];
  return (
    // Nnet::Read() eats exactly one character after "<Nnet3>" and then expects
    // an empty line, so the token is followed by " \n".  The config section
    // ends with a blank line.
    '<Nnet3> \n' +
    `input-node name=input dim=${NUM_CEPS}\n` +
    'component-node name=affine component=affine input=input\n' +
    'component-node name=logsoftmax component=logsoftmax input=affine\n' +
    'output-node name=output input=logsoftmax objective=linear\n' +
    '\n' +
    '<NumComponents> 2 \n' +
    '<ComponentName> affine <FixedAffineComponent> <LinearParams>' +
    kaldiMatrix(linear) +
    '<BiasParams>' +
    kaldiVector(bias) +
    '</FixedAffineComponent> \n' +
    '<ComponentName> logsoftmax <LogSoftmaxComponent> <Dim> 2 <ValueAvg>' +
    kaldiVector([]) +
    '<DerivAvg>' +
    kaldiVector([]) +
    '<Count> 0 </LogSoftmaxComponent> \n' +
    '</Nnet3> \n' +
    // AmNnetSimple trailer: contexts are recomputed anyway; empty priors mean
    // the decoder uses the log-softmax output directly as log-likelihoods.
    '<LeftContext> 0 <RightContext> 0 <Priors>' +
    kaldiVector([])
  );
}

// ---------------------------------------------------------------- OpenFst binary
interface FstArc {
  ilabel: number;
  olabel: number;
  weight: number;
  nextstate: number;
}
interface FstState {
  final: number; // tropical weight, Infinity = not final
  arcs: FstArc[];
}

const FST_MAGIC = 2125659606;
const VECTOR_FST_VERSION = 2;
// kExpanded | kMutable: every other property bit is "unknown", so OpenFst
// computes what it needs (e.g. label sortedness for composition) instead of
// trusting a hand-written claim.
const FST_PROPERTIES = 0x3n;

function fstString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(4);
  len.writeInt32LE(b.length);
  return Buffer.concat([len, b]);
}

/** Serialises a StdVectorFst exactly as OpenFst's VectorFst::Write does (little-endian). */
function encodeVectorFst(states: FstState[], start: number): Buffer {
  const numArcs = states.reduce((n, s) => n + s.arcs.length, 0);
  const head = Buffer.alloc(4);
  head.writeInt32LE(FST_MAGIC);
  const tail = Buffer.alloc(4 + 4 + 8 + 8 + 8 + 8);
  let o = 0;
  o = tail.writeInt32LE(VECTOR_FST_VERSION, o);
  o = tail.writeInt32LE(0, o); // flags: no symbol tables, not aligned
  o = tail.writeBigUInt64LE(FST_PROPERTIES, o);
  o = tail.writeBigInt64LE(BigInt(start), o);
  o = tail.writeBigInt64LE(BigInt(states.length), o);
  tail.writeBigInt64LE(BigInt(numArcs), o);
  const body: Buffer[] = [];
  for (const st of states) {
    const b = Buffer.alloc(4 + 8 + 16 * st.arcs.length);
    let p = b.writeFloatLE(st.final, 0);
    p = b.writeBigInt64LE(BigInt(st.arcs.length), p);
    for (const arc of st.arcs) {
      p = b.writeInt32LE(arc.ilabel, p);
      p = b.writeInt32LE(arc.olabel, p);
      p = b.writeFloatLE(arc.weight, p);
      p = b.writeInt32LE(arc.nextstate, p);
    }
    body.push(b);
  }
  return Buffer.concat([head, fstString('vector'), fstString('standard'), tail, ...body]);
}

/**
 * The H∘C∘L part as a loop over words: state 0 is the start, state 1 "inside
 * silence", states 2.. the chain of a word's SPEECH phone.  `words` are the
 * (word id, graph cost) pairs that may start on a SPEECH frame.  Arcs are
 * sorted by output label so either side of a composition can be matched.
 */
function wordLoopFst(words: Array<[number, number]>): FstState[] {
  const k = TINY_VOSK_MIN_WORD_FRAMES;
  // State 0 (S0) is the start; the arcs below name it by number.
  const SIL = 1;
  const w = (i: number): number => 1 + i; // W1..Wk = states 2..k+1
  const enterWord = words.map(([id, cost]) => ({ ilabel: TID_SPEECH_FWD, olabel: id, weight: cost, nextstate: w(1) }));
  const states: FstState[] = [
    // Each phone instance starts with its forward (final) transition id and
    // continues with self-loops (Kaldi's reordered convention).
    { final: 0, arcs: [{ ilabel: TID_SIL_FWD, olabel: 0, weight: 0, nextstate: SIL }, ...enterWord] },
    { final: 0, arcs: [{ ilabel: TID_SIL_SELF, olabel: 0, weight: 0, nextstate: SIL }, ...enterWord] },
  ];
  for (let i = 1; i < k; i++) {
    // Non-final chain: a word lasts at least k decoder frames.
    states.push({ final: Infinity, arcs: [{ ilabel: TID_SPEECH_SELF, olabel: 0, weight: 0, nextstate: w(i + 1) }] });
  }
  // Last chain state: stay in the word, or start a silence phone.  Words are
  // always separated by silence, which avoids equal-cost alternative
  // segmentations of one loud stretch.
  states.push({
    final: 0,
    arcs: [
      { ilabel: TID_SPEECH_SELF, olabel: 0, weight: 0, nextstate: w(k) },
      { ilabel: TID_SIL_FWD, olabel: 0, weight: 0, nextstate: SIL },
    ],
  });
  for (const st of states) st.arcs.sort((x, y) => x.olabel - y.olabel || x.ilabel - y.ilabel);
  return states;
}

// ---------------------------------------------------------------- text files
const MODEL_CONF = [
  '--min-active=200',
  '--max-active=3000',
  '--beam=10.0',
  '--lattice-beam=2.0',
  '--acoustic-scale=1.0',
  // Vosk converts decoder frames to seconds with a hard-coded 0.03 s.
  '--frame-subsampling-factor=3',
  // Phone 1 is silence: used by endpointing ("trailing silence").
  '--endpoint.silence-phones=1',
  '--endpoint.rule2.min-trailing-silence=0.5',
  '--endpoint.rule3.min-trailing-silence=0.75',
  '--endpoint.rule4.min-trailing-silence=1.0',
].join('\n');

function mfccConf(sampleRate: number): string {
  return [
    // libvosk 0.3.x allows downsampling only: a recogniser whose rate is below
    // this fails every accept_waveform (returns -1, logs an ERROR).
    `--sample-frequency=${sampleRate}`,
    '--use-energy=true', // feature 0 = log frame energy (what the nnet looks at)
    '--dither=0', // default dither is random noise: results would not be deterministic
    `--num-ceps=${NUM_CEPS}`,
    '--num-mel-bins=23',
  ].join('\n');
}

// Phone 1 never belongs to a word; phone 2 is a whole word by itself.
const WORD_BOUNDARY = '1 nonword\n2 singleton\n';

export interface TinyVoskModelOptions {
  /**
   * Write the lookahead layout (HCLr.fst + Gr.fst + disambig_tid.int) instead
   * of HCLG.fst.  Vosk then composes the graph at run time and
   * vosk_recognizer_new_grm() can restrict it to a word list.  In HCLr both
   * "hello" and "world" are loud-audio words; the default Gr.fst only allows
   * "hello" (and "world" at a higher cost), so plain recognisers still say
   * "hello" while a grammar like ["world"] makes loud audio "world".
   */
  dynamicGraph?: boolean;
  /**
   * The model's feature sample rate (default 16000, like real Vosk models).
   * Recognisers created with a higher rate are downsampled by Vosk; a lower
   * rate is rejected at accept time.  8000 gives a "telephony" model.
   */
  sampleRate?: number;
}

export async function writeTinyVoskModel(dir: string, options: TinyVoskModelOptions = {}): Promise<void> {
  await mkdir(join(dir, 'am'), { recursive: true });
  await mkdir(join(dir, 'conf'), { recursive: true });
  await mkdir(join(dir, 'graph', 'phones'), { recursive: true });

  await writeFile(join(dir, 'am', 'final.mdl'), transitionModelText() + nnetText());
  await writeFile(join(dir, 'conf', 'model.conf'), MODEL_CONF + '\n');
  await writeFile(join(dir, 'conf', 'mfcc.conf'), mfccConf(options.sampleRate ?? 16000) + '\n');
  await writeFile(join(dir, 'graph', 'words.txt'), TINY_VOSK_WORDS.map((w, i) => `${w} ${i}`).join('\n') + '\n');
  await writeFile(join(dir, 'graph', 'phones', 'word_boundary.int'), WORD_BOUNDARY);

  if (!options.dynamicGraph) {
    // Static graph: the word loop itself is HCLG (G is "any number of hello").
    await writeFile(join(dir, 'graph', 'HCLG.fst'), encodeVectorFst(wordLoopFst([[wordId('hello'), WORD_PENALTY]]), 0));
    return;
  }

  // Dynamic graph.  HCLr carries no costs for words (G does).  Vosk reads it
  // with StdFst::Read, so a plain "vector" FST is fine; composition then uses
  // OpenFst's default (sorted-matcher) compose instead of label lookahead.
  const hcl = wordLoopFst([
    [wordId('hello'), 0],
    [wordId('world'), 0],
  ]);
  await writeFile(join(dir, 'graph', 'HCLr.fst'), encodeVectorFst(hcl, 0));
  // G: one state, final, loops over the words sorted by input label.
  const g: FstState[] = [
    {
      final: 0,
      arcs: [
        { ilabel: wordId('hello'), olabel: wordId('hello'), weight: WORD_PENALTY, nextstate: 0 },
        { ilabel: wordId('world'), olabel: wordId('world'), weight: WORD_PENALTY + 3, nextstate: 0 },
      ],
    },
  ];
  await writeFile(join(dir, 'graph', 'Gr.fst'), encodeVectorFst(g, 0));
  // Transition-id-level disambiguation symbols to turn into epsilons after
  // composition.  Our HCLr has none; real graphs list ids above the last
  // transition id, so list one such (unused) id rather than an empty file.
  await writeFile(join(dir, 'graph', 'disambig_tid.int'), `${TID_SPEECH_FWD + 1}\n`);
}
