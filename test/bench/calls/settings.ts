/** The sizes of a call benchmark run, read from the environment. */
import { LISTEN_END_SILENCE_MS } from '../../../src/telephony/call/call-turns.js';

/** The sizes of a run, from the environment (the sizes by default). */
export interface CallsBenchSettings {
  readonly calls: number;
  readonly seconds: number;
  readonly rate: number;
  readonly bargeIns: number;
  readonly turns: number;
  /** The listen step's end_silence_ms in the turn measurement. */
  readonly endSilenceMs: number;
  /** Whether the listen step sets it (CALLS_BENCH_END_SILENCE_MS) or keeps the listen default. */
  readonly endSilenceSet: boolean;
  /** Key presses in a menu, and the calls talking meanwhile. */
  readonly keys: number;
  readonly keysBackground: number;
  /** Turns with a webhook bot, and the most it thinks before answering (a random 0 to this). */
  readonly webhookTurns: number;
  readonly webhookBotDelayMs: number;
  /** Calls bridged at once to an echoing Media Streams bot (0 unless CALLS_BENCH_MEDIA_STREAM=1), and how many arrive a second. */
  readonly mediaStreamCalls: number;
  readonly mediaStreamRate: number;
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
 * (10 turns), CALLS_BENCH_KEYS (30 key presses in a menu, with CALLS_BENCH_KEYS_BACKGROUND, 50,
 * calls talking meanwhile), CALLS_BENCH_WEBHOOK_TURNS (30 turns with a webhook bot); 0 leaves a part out.
 * CALLS_BENCH_MEDIA_STREAM=1 adds the media stream part (off unless set): CALLS_BENCH_MEDIA_STREAM_CALLS
 * (100) calls arriving CALLS_BENCH_MEDIA_STREAM_RATE (20) a second, each bridged to an echo bot,
 * CALLS_BENCH_SECONDS with all up. CALLS_BENCH_END_SILENCE_MS: the turn's listen step's
 * end_silence_ms, the silence after which the caller's turn counts as over (unset: the step
 * leaves it out, and the listen default of 240 ms applies).
 */
export function callsBenchSettings(): CallsBenchSettings {
  return {
    calls: Math.round(setting('CALLS_BENCH_CALLS', 200)),
    seconds: setting('CALLS_BENCH_SECONDS', 30),
    rate: Math.max(1, setting('CALLS_BENCH_RATE', 50)),
    bargeIns: Math.round(setting('CALLS_BENCH_BARGE_INS', 20)),
    turns: Math.round(setting('CALLS_BENCH_TURNS', 10)),
    endSilenceMs: Math.round(setting('CALLS_BENCH_END_SILENCE_MS', LISTEN_END_SILENCE_MS)),
    endSilenceSet: (process.env['CALLS_BENCH_END_SILENCE_MS'] ?? '').trim() !== '',
    keys: Math.round(setting('CALLS_BENCH_KEYS', 30)),
    keysBackground: Math.round(setting('CALLS_BENCH_KEYS_BACKGROUND', 50)),
    webhookTurns: Math.round(setting('CALLS_BENCH_WEBHOOK_TURNS', 30)),
    webhookBotDelayMs: Math.max(0, setting('CALLS_BENCH_WEBHOOK_BOT_DELAY_MS', 10)),
    mediaStreamCalls: setting('CALLS_BENCH_MEDIA_STREAM', 0) > 0 ? Math.round(setting('CALLS_BENCH_MEDIA_STREAM_CALLS', 100)) : 0,
    mediaStreamRate: Math.max(1, setting('CALLS_BENCH_MEDIA_STREAM_RATE', 20)),
  };
}
