/**
 * Answering-machine detection for a call we placed: who picked up, told from the pattern of the
 * first seconds of their audio. A person says a word or two ("Hallo?", "Grüezi, Müller") and
 * waits for us; a machine plays its greeting on without pause ("Guten Tag, Sie sind verbunden
 * mit …"), or beeps. So: speech that goes on past the greeting length, or many words, is a
 * machine; speech followed by a silence is a person; a beep is a machine; nothing at all, or no
 * decision within the analysis time, is unknown. Pure and synchronous, a few microseconds a
 * frame and nothing allocated, so it runs on the main thread for every call.
 */
import { CalleeFrames, type CalleeListenOptions } from './callee-frames.js';

/** Who answered. */
export type AmdResult = 'human' | 'machine' | 'unknown';

/** Why: the rule that decided. */
export type AmdReason =
  /** A short utterance, then silence: a person waiting for us (human). */
  | 'short-greeting'
  /** Speech longer than a person's answer (machine). */
  | 'long-greeting'
  /** More words than a person's answer (machine). */
  | 'many-words'
  /** An answering machine's beep (machine); reported when the beep has ended. */
  | 'beep'
  /** No speech within the initial silence (unknown). */
  | 'silence'
  /** No decision within the analysis time (unknown). */
  | 'max-time';

/** The detector's verdict, and how much of the callee's audio it took. */
export interface AmdOutcome {
  readonly result: AmdResult;
  readonly reason: AmdReason;
  /** Audio time from the first frame to the decision, in ms. */
  readonly afterMs: number;
}

/** The detector's rules; defaults in {@link DEFAULT_AMD_OPTIONS}. */
export interface AmdOptions extends CalleeListenOptions {
  /** No speech this long: unknown, 'silence'. */
  readonly initialSilenceMs?: number;
  /** Speech (first word to last, short pauses included) this long: machine, 'long-greeting'. */
  readonly greetingMs?: number;
  /** Silence this long after speech shorter than the greeting: human, 'short-greeting'. */
  readonly afterGreetingSilenceMs?: number;
  /** This many words before a silence: machine, 'many-words'. */
  readonly maxWords?: number;
  /** No decision this long: unknown, 'max-time'. */
  readonly maxAnalysisMs?: number;
}

/**
 * Defaults tuned on synthetic speech (docs/performance.md, "Answering-machine detection"):
 * people's answers there last up to 1.9 s, greetings go on for 3 s and more.
 */
export const DEFAULT_AMD_OPTIONS = {
  initialSilenceMs: 2500,
  greetingMs: 1800,
  afterGreetingSilenceMs: 800,
  maxWords: 6,
  maxAnalysisMs: 5000,
} as const satisfies AmdOptions;

/** Classifies one call's answer from its audio, fed in 20 ms frames. */
export class AnsweringMachineDetector {
  private readonly frames: CalleeFrames;
  private readonly rules: Required<Omit<AmdOptions, keyof CalleeListenOptions>>;
  private outcome: AmdOutcome | null = null;

  /** @throws RangeError for a rate without whole 20 ms frames. */
  constructor(rateHz: number, options: AmdOptions = {}) {
    this.frames = new CalleeFrames(rateHz, options);
    this.rules = {
      initialSilenceMs: options.initialSilenceMs ?? DEFAULT_AMD_OPTIONS.initialSilenceMs,
      greetingMs: options.greetingMs ?? DEFAULT_AMD_OPTIONS.greetingMs,
      afterGreetingSilenceMs: options.afterGreetingSilenceMs ?? DEFAULT_AMD_OPTIONS.afterGreetingSilenceMs,
      maxWords: options.maxWords ?? DEFAULT_AMD_OPTIONS.maxWords,
      maxAnalysisMs: options.maxAnalysisMs ?? DEFAULT_AMD_OPTIONS.maxAnalysisMs,
    };
  }

  /** Samples a frame must have: 20 ms at the rate. */
  get frameSamples(): number {
    return this.frames.frameSamples;
  }

  /** The longest audio it takes to decide, in ms (a beep sounding then still ends first). */
  get maxMs(): number {
    return this.rules.maxAnalysisMs;
  }

  /** The verdict, once there is one. */
  get decision(): AmdOutcome | null {
    return this.outcome;
  }

  /**
   * Takes the next 20 ms frame; returns the verdict on the frame that decides and on every frame
   * after it (later audio changes nothing), null before.
   */
  push(frame: Int16Array): AmdOutcome | null {
    if (this.outcome) return this.outcome;
    const beepEnded = this.frames.push(frame);
    if (beepEnded) return this.decide('machine', 'beep');
    // A beep is sounding: its end is the moment to report (and its frames are no silence).
    if (this.frames.tone.sounding) return null;
    const speech = this.frames.speech;
    const r = this.rules;
    if (!speech.spoke) {
      if (speech.elapsedMs >= r.initialSilenceMs) return this.decide('unknown', 'silence');
    } else {
      if (speech.speechMs >= r.greetingMs) return this.decide('machine', 'long-greeting');
      if (speech.words >= r.maxWords) return this.decide('machine', 'many-words');
      if (speech.silenceMs >= r.afterGreetingSilenceMs) return this.decide('human', 'short-greeting');
    }
    if (speech.elapsedMs >= r.maxAnalysisMs) return this.decide('unknown', 'max-time');
    return null;
  }

  private decide(result: AmdResult, reason: AmdReason): AmdOutcome {
    this.outcome = { result, reason, afterMs: this.frames.speech.elapsedMs };
    return this.outcome;
  }
}
