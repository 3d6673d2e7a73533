/**
 * Phone calls against `sprachrohr serve` processes over loopback, the four call figures:
 *
 * - Load: N concurrent calls from SIPp (test/bench/sipp/load-call.xml) on one gateway process,
 *   G.711 both ways for the whole call: the route loops a prompt (synthetic engines, no
 *   barge-in), SIPp plays the caller's speech (a capture of Debian's "go forward ten meters",
 *   looped) and the gateway runs its voice-activity detector on every frame. The gateway's RTP
 *   goes where the caller's packets come from: SIPp sends each call from the port its SDP names,
 *   and this process has a socket on each of those ports. Every packet's arrival is compared with
 *   the call's schedule: n × 20 ms after the call's first packet, n from the RTP timestamp (which
 *   runs on with the clock, also across the short gap between two prompts), the whole schedule
 *   shifted to the call's most punctual packet so that no packet counts as early. Only packets
 *   of the window in which all N calls are up count (S seconds from the moment the last call's
 *   first packet arrived). Arrival times are taken in this process's event loop, which shares the
 *   machine with the gateway and SIPp: its own event-loop delay in the window is reported beside
 *   them. The gateway's own pacer statistics (tick lateness) are read from inside the gateway by
 *   a small preload that answers SIGUSR2.
 * - Memory per call: the gateway's RSS (VmRSS) with N calls up (median of the window's samples)
 *   minus its RSS with no call (after a short warm-up round of calls), divided by N. The routes
 *   use the synthetic engines and the process runs without live engines
 *   (SPRACHROHR_TTS_ENGINE/STT_ENGINE none), so the engines are excluded.
 * - Barge-in: a scripted caller (SIP over UDP and an RTP socket, both in this process) streams
 *   silence, and during a long prompt (synthetic engines) switches to speech from its first
 *   frame louder than RMS 500. Measured in this process: sending of that first speech packet →
 *   arrival of the last prompt packet. The detector needs three voiced frames (60 ms) before it
 *   calls speech started; the figure is also given less those 60 ms.
 * - Turn latency, live engines (eSpeak NG and pocketsphinx, one worker each on two cores): the
 *   caller says the recording after the greeting; measured in this process from sending the last
 *   20 ms frame louder than RMS 500 (the 8 kHz audio) to the arrival of the reply's first packet.
 *   The listen step's end of turn (240 ms of silence by default) comes before the final; the figure is given in
 *   total and beyond that hangover. The gateway's own figure (its detector's last voiced frame →
 *   the reply's first packet sent, logged as `turnLatencyMs`) is given beside it.
 * - Menu keys and webhook turns (menu-keys.ts, webhook-turns.ts: CALLS_BENCH_KEYS,
 *   CALLS_BENCH_WEBHOOK_TURNS) and, when CALLS_BENCH_MEDIA_STREAM=1, calls handed by `stream` to
 *   a Twilio Media Streams bot that echoes every frame (media-stream.ts: CALLS_BENCH_MEDIA_STREAM_CALLS,
 *   100; CALLS_BENCH_MEDIA_STREAM_RATE, 20 a second): pacing on the wire, echo and mark round
 *   trips, CPU and memory per call.
 *
 * Sizes (environment): CALLS_BENCH_CALLS (200 concurrent calls), CALLS_BENCH_SECONDS (30 s with
 * all calls up), CALLS_BENCH_RATE (50 new calls a second), CALLS_BENCH_BARGE_INS (20 rounds),
 * CALLS_BENCH_TURNS (10 turns); 0 leaves a part out. CALLS_BENCH_MEDIA_PORT sets SIPp's media
 * port (-mp; the receivers use the ports 4n above it, below 20000 by default).
 * The parts are in test/bench/calls/: load.ts (with memory per call), barge-in.ts, turns.ts;
 * gateway-process.ts starts the gateway, rtp-receiver.ts and caller.ts are the two ends of the RTP.
 * Needs SIPp (sip-tester) with PCAP play (raw sockets: root or CAP_NET_RAW).
 * Run: npm run bench (or, after npm run build: node --single-threaded-gc --import tsx test/bench/calls.bench.ts)
 */
import os from 'node:os';
import { printCallsFigures } from './calls/print.js';
import { benchCalls } from './calls/run.js';
import { callsBenchSettings } from './calls/settings.js';

export type { LoadFigures } from './calls/load.js';
export { printCallsFigures } from './calls/print.js';
export { benchCalls, type CallsFigures } from './calls/run.js';
export { callsBenchSettings, type CallsBenchSettings } from './calls/settings.js';

if (import.meta.url === `file://${process.argv[1]}`) {
  const settings = callsBenchSettings();
  console.log(`Machine: ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; ${JSON.stringify(settings)}`);
  printCallsFigures(await benchCalls(settings));
}
