/**
 * The media thread: every call's RTP sockets, jitter buffers, decoders, voice and key detectors,
 * and the one pacer clock that sends all outgoing frames. It runs apart from the main thread so
 * that garbage collection, SIP, prompt synthesis and recognition there never delay a tick; when
 * this thread is free, a precise sleep wakes the pacer within a fraction of a millisecond of
 * its deadline.
 */
import os from 'node:os';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { loadWebRtcVad } from '../../../engine/vad/webrtc-vad.js';
import { loadResampler } from '../../audio/resampler.js';
import { PacerClock } from '../rtp/pacer.js';
import { createPreciseScheduler, DOORBELL_MARGIN_MS } from '../rtp/precise-scheduler.js';
import { AudioBatch } from './audio-batch.js';
import { BridgePairs } from './bridge-pairs.js';
import { MediaSession } from './media-session.js';
import type { CallMedia, MediaCommand, MediaEvent } from './media-protocol.js';
import { MessageBatch } from './message-batch.js';
import { RtpPortPool, RtpPortsExhausted, type RtpPorts } from './rtp-port-pool.js';

/** What the main thread gives the media thread at its start. */
export interface MediaWorkerData {
  readonly host: string;
  readonly rtpPorts: { readonly min: number; readonly max: number };
  /**
   * Rung by the main thread after it posted an urgent batch (a prompt's first frames): the
   * pacer's precise wait takes the commands then, so that they make the deadline it waits for.
   */
  readonly doorbell: Int32Array;
}

/** One call's media here: its ports from `open`, its session from `start`. */
interface CallSlot {
  readonly ports: RtpPorts;
  session: MediaSession | null;
}

const port = parentPort!;
const { host, rtpPorts, doorbell } = workerData as MediaWorkerData;
const out = new MessageBatch<MediaEvent>(port);
const pool = new RtpPortPool(host, rtpPorts);
const calls = new Map<number, CallSlot>();
const audio = new AudioBatch();
/** Commands taken from the port during a wait that the deadline left for after the tick. */
let held: MediaCommand[] = [];
// While the pacer waits for a deadline, the thread's event loop is blocked: commands that ring
// (a prompt's first frames) are taken from the port during the wait, so the reply can go out in
// the slot being waited for. Without it they waited until after that slot's tick and missed it
// (the webhook bench: bot answer → first reply packet p50 8.3 ms, of which 4.9 ms in this thread).
// Taken command by command, each only while the margin is left: what the deadline leaves over
// is held and runs right after the tick, before anything that comes later.
const scheduler = createPreciseScheduler({
  word: doorbell,
  answer: (deadline) => {
    for (;;) {
      if (held.length === 0) {
        const received = receiveMessageOnPort(port) as { message: MediaCommand[] } | undefined;
        if (!received) return;
        held = received.message;
      }
      while (held.length > 0) {
        if (deadline - performance.now() <= DOORBELL_MARGIN_MS) return void setImmediate(runHeld);
        run(held.shift()!);
      }
    }
  },
});
const pacer = new PacerClock({
  scheduler,
  // Four 5 ms slots: a quarter of the calls per wake-up; a reply after a pause goes out at once
  // (into the slot just passed) or, where that slot is full, waits at most 5 ms for the next.
  phases: 4,
  onError: (error) => report(null, error),
});

// While calls are bridged, their packets are read during the pacer's precise waits too: each
// would otherwise wait up to the scheduler's early margin before it goes on to the other call.
const bridges = new BridgePairs(
  (id) => calls.get(id)?.session ?? null,
  (running) => (scheduler.letIoIn = running > 0),
);

function report(id: number | null, error: unknown): void {
  const failure = error instanceof Error ? error : new Error(String(error));
  out.send({ ev: 'error', id, message: failure.message, ...(failure.stack ? { stack: failure.stack } : {}) });
}

async function open(id: number): Promise<void> {
  try {
    const ports = await pool.allocate();
    calls.set(id, { ports, session: null });
    out.send({ ev: 'opened', id, port: ports.port });
  } catch (error) {
    out.send({ ev: 'open-failed', id, exhausted: error instanceof RtpPortsExhausted, message: (error as Error).message });
  }
}

/** The call's media as negotiated: starts the session, or updates it (re-INVITE). */
function negotiated(id: number, slot: CallSlot, media: CallMedia): void {
  if (slot.session) return slot.session.update(media);
  const session = new MediaSession(slot.ports, media, pacer);
  slot.session = session;
  session.on('audio', (pcm) => {
    // The first frame of a tick schedules the batch's message; the rest of the tick joins it.
    if (audio.size === 0) queueMicrotask(() => out.send({ ev: 'audio', frames: audio.take() }));
    audio.add(id, pcm);
  });
  session.on('dtmf', (key, via) => out.send({ ev: 'dtmf', id, key, via }));
  session.on('speech-start', () => out.send({ ev: 'speech-start', id }));
  session.on('played-out', (prompt, playout) => out.send({ ev: 'played-out', id, prompt, report: playout }));
  session.on('mark', (mark, played) => out.send({ ev: 'mark', id, mark, played }));
  bridges.started(id);
}

function close(id: number, slot: CallSlot): void {
  bridges.leave(id);
  calls.delete(id);
  const quality = slot.session?.quality() ?? {};
  if (slot.session) slot.session.close();
  else slot.ports.release();
  out.send({ ev: 'closed', id, quality });
}

function handle(command: MediaCommand): void {
  if (command.op === 'open') return void open(command.id);
  if (command.op === 'pacing') {
    out.send({ ev: 'pacing', request: command.request, stats: pacer.stats() });
    if (command.reset) pacer.resetStats();
    return;
  }
  if (command.op === 'bridge') return calls.has(command.id) && calls.has(command.other) ? bridges.join(command.id, command.other) : undefined;
  if (command.op === 'unbridge') return bridges.leave(command.id);
  const slot = calls.get(command.id);
  if (!slot) return;
  const session = slot.session;
  switch (command.op) {
    case 'start':
    case 'update':
      return negotiated(command.id, slot, command.media);
    case 'close':
      return close(command.id, slot);
    case 'prompt':
      return session?.startPrompt(command.prompt, command.bargeIn);
    case 'frames':
      return session?.enqueue(command.prompt, command.payloadType, command.run);
    case 'end':
      return session?.endPrompt(command.prompt);
    case 'stop':
      return session?.stopPlayback();
    case 'mark':
      // Before the media starts nothing was queued: the mark is due at once.
      return session ? session.addMark(command.prompt, command.mark) : out.send({ ev: 'mark', id: command.id, mark: command.mark, played: true });
    case 'dtmf':
      return void session?.sendDtmf(command.key);
  }
}

/**
 * The thread's nice value: above every ordinary thread, so that a busy host (other processes,
 * the main thread's synthesis) does not hold it back past a deadline (calls bench, 15 s: 31
 * packets later than 10 ms on the wire with it, 389 without). On Linux it applies to this thread only; it
 * needs root or CAP_SYS_NICE, and without them the thread runs at the ordinary priority.
 */
const MEDIA_THREAD_NICE = -10;

function raisePriority(): string | null {
  try {
    os.setPriority(MEDIA_THREAD_NICE);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

await Promise.all([loadResampler(), loadWebRtcVad()]);
const priorityRefused = raisePriority();
function run(command: MediaCommand): void {
  try {
    handle(command);
  } catch (error) {
    report('id' in command ? command.id : null, error);
  }
}

function runHeld(): void {
  const commands = held;
  held = [];
  for (const command of commands) run(command);
}

port.on('message', (batch: MediaCommand[]) => {
  runHeld();
  for (const command of batch) run(command);
});
out.send({ ev: 'ready', nice: priorityRefused === null ? MEDIA_THREAD_NICE : 0, ...(priorityRefused === null ? {} : { priorityRefused }) });
