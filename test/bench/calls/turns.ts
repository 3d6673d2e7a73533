/**
 * Turn latency with live engines: the caller says the recording after the greeting; measured from
 * the end of its speech (the packet with the last frame of speech sent: the caller has just
 * spoken that frame) to the arrival of the reply's first packet.
 */
import type { CallerSpeech } from './caller-speech.js';
import { Caller } from './caller.js';
import { FRAME_SAMPLES, MULAW_SILENCE, summary, until, type Summary } from './common.js';
import type { Gateway } from './gateway-process.js';

/** The turn latencies: in total, beyond the recogniser's hangover, and as the gateway logs them. */
export interface TurnFigures {
  readonly total: Summary;
  /** The same, less the end-of-turn silence the listen step waited for. */
  readonly beyondHangover: Summary;
  /** That silence (the listen step's end_silence_ms). */
  readonly endSilenceMs: number;
  /** The gateway's own figure: its detector's last voiced frame → the reply's first packet sent. */
  readonly gateway: Summary;
  /** Turns without a reply. */
  readonly failed: number;
  /** What the recogniser heard in the measured turns, each transcript with how often. */
  readonly heard: ReadonlyMap<string, number>;
}

/** Turns: last frame of speech sent → first reply packet received, per turn. */
async function turns(gateway: Gateway, speech: CallerSpeech, rounds: number): Promise<{ latenciesMs: number[]; failed: number }> {
  const latenciesMs: number[] = [];
  let failed = 0;
  const words = [...speech.frames, ...Array.from({ length: 25 }, () => new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE))];
  for (let round = 0; round < rounds; round++) {
    const caller = await Caller.dial(gateway.sipPort, 'turn', `calls-bench-turn-${process.pid}-${round}`);
    try {
      // The greeting: wait until it has played and 300 ms passed without a packet.
      await until(() => caller.received.length > 0 && performance.now() - caller.received[caller.received.length - 1]!.at > 300, 15_000, 'the greeting');
      const heardBefore = caller.received.length;
      const times = await caller.play(words);
      await until(() => caller.received.length > heardBefore, 15_000, 'the reply').catch(() => undefined);
      const reply = caller.received[heardBefore];
      if (reply && reply.at > times[speech.lastSpeech]!) latenciesMs.push(reply.at - times[speech.lastSpeech]!);
      else failed += 1;
      await caller.byeFromGateway(20_000);
    } finally {
      await caller.close();
    }
  }
  return { latenciesMs, failed };
}

/** A warm-up turn, then `rounds` turns on the gateway's `turn` route. */
/** `endSilenceMs`: the listen step's end of turn, subtracted for the figure beyond it. */
export async function benchTurns(gateway: Gateway, speech: CallerSpeech, rounds: number, endSilenceMs: number): Promise<TurnFigures> {
  await turns(gateway, speech, 1); // warm-up: the engines' first use
  const logged = gateway.log.turnLatenciesMs.length;
  const heardBefore = gateway.log.heard.length;
  const { latenciesMs, failed } = await turns(gateway, speech, rounds);
  const heard = new Map<string, number>();
  for (const text of gateway.log.heard.slice(heardBefore)) heard.set(text, (heard.get(text) ?? 0) + 1);
  return {
    total: summary(latenciesMs),
    beyondHangover: summary(latenciesMs.map((ms) => ms - endSilenceMs)),
    endSilenceMs,
    gateway: summary(gateway.log.turnLatenciesMs.slice(logged)),
    failed,
    heard,
  };
}
