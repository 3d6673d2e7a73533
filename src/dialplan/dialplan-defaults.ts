/**
 * The defaults of every dialplan field that may be left out: one object, read by the schema
 * (its descriptions, and so `docs/dialplans.md`) and by the steps that run (so the two cannot
 * drift apart).
 */
export const DIALPLAN_DEFAULTS = {
  route: {
    /** `live` engines, or `synthetic` ones for load tests. */
    engines: 'live',
    /** How often `goto` may jump back in one call; past it the call ends. */
    max_turns: 20,
  },
  say: {
    /** Caller speech or a key stops the prompt. */
    barge_in: true,
  },
  listen: {
    speech: true,
    dtmf: true,
    /** No speech or key for this long ends the step. */
    timeout_ms: 5000,
    /** The longest the step listens. */
    max_ms: 15_000,
    /** Keys that end the step. */
    max_digits: 1,
    /**
     * Silence after speech that ends the caller's turn: twelve 20 ms frames, so that the
     * gateway answers within a breath (measured turns: docs/performance.md); 500 or more for
     * free speech, where callers pause mid-sentence.
     */
    end_silence_ms: 240,
  },
} as const;
