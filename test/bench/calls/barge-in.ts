/**
 * Barge-in: a scripted caller streams silence and, during a long prompt, switches to speech from
 * its first loud frame; measured to the arrival of the last prompt packet from sending the first
 * speech packet, and from the speech start: the third speech packet sent, when the caller has
 * spoken the 60 ms (three voiced frames) the detector takes as speech starting (a packet is sent
 * once its 20 ms of audio have been spoken).
 */
import type { CallerSpeech } from './caller-speech.js';
import { Caller } from './caller.js';
import { FRAME_MS, sleep, summary, until, type Summary } from './common.js';
import type { Gateway } from './gateway-process.js';

/** Three voiced frames in a row are speech starting (the media session's detector). */
const SPEECH_START_FRAMES = 3;

/** The barge-in delays from the first speech packet, and from the speech start. */
export interface BargeInFigures {
  readonly raw: Summary;
  readonly fromSpeechStart: Summary;
  /** Rounds in which the prompt did not stop. */
  readonly failed: number;
}

/** Barge-in: first speech packet sent → last prompt packet received, per round. */
async function bargeIns(gateway: Gateway, speech: CallerSpeech, rounds: number): Promise<{ delaysMs: number[]; fromSpeechStartMs: number[]; failed: number }> {
  const delaysMs: number[] = [];
  const fromSpeechStartMs: number[] = [];
  let failed = 0;
  const words = speech.frames.slice(speech.firstLoud);
  for (let round = 0; round < rounds; round++) {
    const caller = await Caller.dial(gateway.sipPort, 'barge', `calls-bench-barge-${process.pid}-${round}`);
    try {
      await until(() => caller.received.length >= 40, 10_000, 'the prompt');
      // Speech starts at a different point of the gateway's 20 ms tick each round.
      await sleep(Math.random() * FRAME_MS);
      const sent = caller.play(words);
      const stopped = await caller.byeFromGateway(5000);
      const times = await sent;
      const last = caller.received[caller.received.length - 1]!.at;
      if (stopped) {
        delaysMs.push(last - times[0]!);
        fromSpeechStartMs.push(last - times[SPEECH_START_FRAMES - 1]!);
      } else failed += 1;
    } finally {
      await caller.close();
    }
  }
  return { delaysMs, fromSpeechStartMs, failed };
}

/** `rounds` barge-ins on the gateway's `barge` route. */
export async function benchBargeIn(gateway: Gateway, speech: CallerSpeech, rounds: number): Promise<BargeInFigures> {
  const { delaysMs, fromSpeechStartMs, failed } = await bargeIns(gateway, speech, rounds);
  return { raw: summary(delaysMs), fromSpeechStart: summary(fromSpeechStartMs), failed };
}
