/** The call figures as docs/performance.md shows it. */
import os from 'node:os';
import type { Pacing } from './load.js';
import { printMediaStreamRows } from './media-stream.js';
import type { CallsFigures } from './run.js';

const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;

/** Prints the figures as docs/performance.md shows it. */
export function printCallsFigures(figures: CallsFigures): void {
  const { load, bargeIn, turn, keys, webhook, mediaStream } = figures;
  console.log(`\nPhone calls over loopback (one serve process; ${os.availableParallelism()} cores shared with SIPp and the measuring process):`);
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  if (load) {
    const l = load;
    const setup = `${l.calls} concurrent calls from SIPp, G.711 both ways, VAD on, synthetic engines, ${l.windowSeconds.toFixed(1)} s with all up`;
    const pacing = (p: Pacing): string =>
      `p50 ${ms(p.pacingMs.p50, 2)}, p99 ${ms(p.pacingMs.p99, 2)}, max ${ms(p.pacingMs.max)}; ${p.laterThan10Ms} later than 10 ms, ${p.laterThan2Ms} later than 2 ms, ${p.lost} lost`;
    const w = l.wire;
    console.log(
      'unavailable' in w
        ? `| ${setup}: pacing error on the wire (kernel timestamps) | not measured: ${w.unavailable} | p99 ≤ 2 ms, none later than 10 ms |`
        : `| ${setup}: pacing error of the gateway's packets on the wire (kernel timestamps, tcpdump on lo: each packet against its call's schedule, from the call's most punctual packet; ${w.packets.toLocaleString('en-US')} packets of ${l.callsWithAudio} calls${w.dropped ? `, ${w.dropped} dropped by the capture` : ''}) | ${pacing(w)} | p99 ≤ 2 ms, none later than 10 ms |`,
    );
    console.log(
      `| the same packets as the receiving sockets saw them (their event loop's delay included; ${l.received.packets.toLocaleString('en-US')} packets) | ${pacing(l.received)} | — |`,
    );
    console.log(
      `| the same calls on one gateway process: its CPU in the window (1.00 = one core busy) | ${l.cpu.gateway.toFixed(2)} for ${l.calls} calls (${Math.round(l.calls / l.cpu.gateway)} calls per busy core; SIPp ${l.cpu.sipp.toFixed(2)}, measuring process ${l.cpu.bench.toFixed(2)}); SIPp: ${l.sipp.successful} calls successful, ${l.sipp.failed} failed | ≥ 200 calls per core |`,
    );
    const p = l.pacer;
    console.log(
      `| the same calls: the gateway's pacer, tick lateness against its deadlines | ${p ? `p50 ${ms(p.p50LatenessMs, 2)}, p99 ${ms(p.p99LatenessMs, 2)}, max ${ms(p.maxLatenessMs)}; ${p.skippedTicks} ticks skipped of ${p.ticks}` : 'not read'} | — |`,
    );
    console.log(
      `| the same calls: event-loop delay of the measuring process (its timing error) | p99 ${ms(l.receiverLoopDelayMs.p99)}, max ${ms(l.receiverLoopDelayMs.max)} | — |`,
    );
    console.log(
      `| memory per call, engines excluded ((RSS with ${l.calls} calls − RSS idle) / ${l.calls}) | ${l.rssMb.perCall.toFixed(2)} MB (idle ${l.rssMb.idle.toFixed(0)} MB, ${l.calls} calls ${l.rssMb.loaded.toFixed(0)} MB, after ${l.rssMb.after.toFixed(0)} MB) | ≤ 2 MB |`,
    );
  }
  if (bargeIn) {
    const b = bargeIn;
    console.log(
      `| barge-in: first speech packet sent → last prompt packet received (${b.raw.count} rounds${b.failed ? `, ${b.failed} not stopped` : ''}) | p50 ${ms(b.raw.p50)}, p95 ${ms(b.raw.p95)}, max ${ms(b.raw.max)} | — |`,
    );
    console.log(
      `| barge-in from the speech start (the third speech packet sent: 60 ms of voice, the detector's three frames) → last prompt packet received | p50 ${ms(b.fromSpeechStart.p50)}, p95 ${ms(b.fromSpeechStart.p95)}, max ${ms(b.fromSpeechStart.max)} | ≤ 40 ms |`,
    );
  }
  if (turn) {
    const t = turn;
    console.log(
      `| turn, eSpeak NG and pocketsphinx: end of the caller's speech (its last frame within 30 dB of the loudest, sent) → first reply packet received (${t.total.count} turns${t.failed ? `, ${t.failed} without a reply` : ''}) | p50 ${ms(t.total.p50, 0)}, p95 ${ms(t.total.p95, 0)} | p50 ≤ 300 ms |`,
    );
    console.log(
      `| the same turns beyond the ${t.endSilenceMs} ms end-of-turn silence | p50 ${ms(t.beyondHangover.p50, 0)}, p95 ${ms(t.beyondHangover.p95, 0)} | — |`,
    );
    console.log(
      `| the same turns as the gateway logs them (its detector's last voiced frame → first reply packet sent) | p50 ${ms(t.gateway.p50, 0)}, p95 ${ms(t.gateway.p95, 0)} | — |`,
    );
    const heard = [...t.heard].map(([text, times]) => `"${text}" ×${times}`).join(', ');
    console.log(`| the same turns: what the recogniser heard | ${heard || 'nothing'} | — |`);
  }
  if (keys) {
    console.log(
      `| menu key, eSpeak NG, ${keys.background} other calls talking: first RFC 4733 packet of the key sent → first packet of the next prompt received (${keys.keyToPrompt.count} keys${keys.failed ? `, ${keys.failed} without a prompt` : ''}) | p50 ${ms(keys.keyToPrompt.p50)}, p95 ${ms(keys.keyToPrompt.p95)}, max ${ms(keys.keyToPrompt.max)} | p50 ≤ 40 ms |`,
    );
  }
  if (webhook) {
    const failed = webhook.failed ? `, ${webhook.failed} without a reply` : '';
    console.log(
      `| webhook bot on loopback: the caller's key (end of its turn) sent → the bot's request received (${webhook.keyToRequest.count} turns${failed}) | p50 ${ms(webhook.keyToRequest.p50)}, p95 ${ms(webhook.keyToRequest.p95)} | p50 ≤ 5 ms |`,
    );
    console.log(
      `| the same turns: the bot's answer sent (after a random 0–${figures.settings.webhookBotDelayMs} ms of thinking) → the first reply packet received (eSpeak NG) | p50 ${ms(webhook.answerToPacket.p50)}, p95 ${ms(webhook.answerToPacket.p95)} | p50 ≤ 5 ms |`,
    );
  }
  if (mediaStream) printMediaStreamRows(mediaStream);
}
