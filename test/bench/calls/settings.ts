/** The sizes of a call benchmark run, read from the environment. */

/** The sizes of a run, from the environment (the sizes by default). */
export interface CallsBenchSettings {
  readonly calls: number;
  readonly seconds: number;
  readonly rate: number;
  readonly bargeIns: number;
  readonly turns: number;
  /** The listen step's end_silence_ms in the turn measurement. */
  readonly endSilenceMs: number;
}

function setting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * CALLS_BENCH_CALLS (200 concurrent calls), CALLS_BENCH_SECONDS (30 s with all calls up),
 * CALLS_BENCH_RATE (50 new calls a second), CALLS_BENCH_BARGE_INS (20 rounds), CALLS_BENCH_TURNS
 * (10 turns); 0 leaves a part out. CALLS_BENCH_END_SILENCE_MS (500): the turn's listen step's
 * end_silence_ms, the silence after which the caller's turn counts as over.
 */
export function callsBenchSettings(): CallsBenchSettings {
  return {
    calls: Math.round(setting('CALLS_BENCH_CALLS', 200)),
    seconds: setting('CALLS_BENCH_SECONDS', 30),
    rate: Math.max(1, setting('CALLS_BENCH_RATE', 50)),
    bargeIns: Math.round(setting('CALLS_BENCH_BARGE_INS', 20)),
    turns: Math.round(setting('CALLS_BENCH_TURNS', 10)),
    endSilenceMs: Math.round(setting('CALLS_BENCH_END_SILENCE_MS', 500)),
  };
}
