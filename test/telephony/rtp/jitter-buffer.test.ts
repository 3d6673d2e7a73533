/**
 * The playout buffer against scripted arrivals: packets arrive at given times, the receive side
 * pops once per 20 ms tick, and the test reads which frame each tick played.
 */
import { describe, expect, it } from 'vitest';
import { JitterBuffer, type JitterBufferOptions } from '../../../src/telephony/rtp/jitter-buffer.js';
import type { RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';

interface Arrival {
  readonly seq: number;
  readonly at: number;
  readonly ssrc?: number;
  readonly payloadType?: number;
  readonly timestamp?: number;
}

function packet(arrival: Arrival): RtpPacket {
  const { seq, ssrc = 1, payloadType = 0 } = arrival;
  return {
    payloadType,
    sequenceNumber: seq & 0xffff,
    timestamp: (arrival.timestamp ?? seq * 160) >>> 0,
    ssrc,
    marker: false,
    payload: new Uint8Array([seq & 0xff]),
  };
}

/** Arrivals of `count` packets from `firstSeq`, one per 20 ms from `start` plus a per-packet offset. */
function stream(firstSeq: number, count: number, start = 0, offset: (i: number) => number = () => 0): Arrival[] {
  return Array.from({ length: count }, (_, i) => ({ seq: (firstSeq + i) & 0xffff, at: start + i * 20 + offset(i) }));
}

/** What each tick played: the sequence number, 'L' for concealment, '-' before the first frame. */
type Played = number | 'L' | '-';

/** Pushes each arrival when its time has come and pops at `phase + k × 20` for `ticks` ticks. */
function run(buffer: JitterBuffer, arrivals: readonly Arrival[], ticks: number, phase = 5): Played[] {
  const queue = [...arrivals].sort((a, b) => a.at - b.at);
  const played: Played[] = [];
  let next = 0;
  for (let k = 0; k < ticks; k++) {
    const now = phase + k * 20;
    while (next < queue.length && queue[next]!.at <= now) buffer.push(packet(queue[next]!), queue[next++]!.at);
    const out = buffer.pop(now);
    played.push(out === null ? '-' : out === 'lost' ? 'L' : out.sequenceNumber);
  }
  return played;
}

const newBuffer = (options: Partial<JitterBufferOptions> = {}): JitterBuffer => new JitterBuffer({ payloadType: 0, ...options });
const frames = (played: Played[]): number[] => played.filter((p): p is number => typeof p === 'number');

describe('JitterBuffer', () => {
  it('returns null until the first frame has waited the minimum delay, then one frame per tick', () => {
    const buffer = newBuffer();
    expect(buffer.pop(0)).toBeNull();
    // Ticks at 5, 25, 45 …: the first packet (arrived at 0) has waited 25 ms at the second.
    const played = run(buffer, stream(100, 20), 21);
    expect(played).toEqual(['-', ...Array.from({ length: 20 }, (_, i) => 100 + i)]);
    expect(buffer.stats()).toMatchObject({ received: 20, lost: 0, late: 0, duplicate: 0, concealed: 0, gaps: 0, targetDelayMs: 20 });
    expect(buffer.stats().delayMs).toBeGreaterThanOrEqual(20);
    expect(buffer.stats().delayMs).toBeLessThan(40);
  });

  it('puts reordered packets back in order', () => {
    const arrivals = stream(0, 20).map((a) => (a.seq % 4 === 1 ? { ...a, at: a.at + 25 } : a));
    const played = run(newBuffer({ minDelayMs: 40 }), arrivals, 22);
    expect(played).toEqual(['-', '-', ...Array.from({ length: 20 }, (_, i) => i)]);
  });

  it('drops duplicates', () => {
    const arrivals = [...stream(0, 10), { seq: 3, at: 65 }, { seq: 4, at: 70 }, { seq: 4, at: 71 }];
    const buffer = newBuffer();
    expect(frames(run(buffer, arrivals, 14))).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(buffer.stats()).toMatchObject({ duplicate: 3, received: 10 });
  });

  it('conceals a lost frame and plays on', () => {
    const buffer = newBuffer();
    const played = run(
      buffer,
      stream(0, 10).filter((a) => a.seq !== 4),
      12,
    );
    // After the last frame the buffer runs dry: the caller conceals on.
    expect(played).toEqual(['-', 0, 1, 2, 3, 'L', 5, 6, 7, 8, 9, 'L']);
    expect(buffer.stats()).toMatchObject({ lost: 1, late: 0 });
  });

  it('drops a packet that arrives after its playout time, and counts it late but not lost', () => {
    const buffer = newBuffer();
    const arrivals = stream(0, 10).map((a) => (a.seq === 4 ? { ...a, at: a.at + 50 } : a));
    const played = run(buffer, arrivals, 11);
    expect(played).toEqual(['-', 0, 1, 2, 3, 'L', 5, 6, 7, 8, 9]);
    expect(buffer.stats()).toMatchObject({ late: 1, lost: 0, received: 10, gaps: 1 });
  });

  it('stays on schedule through a burst of losses', () => {
    const buffer = newBuffer();
    const played = run(
      buffer,
      stream(0, 30).filter((a) => a.seq < 10 || a.seq >= 18),
      31,
    );
    expect(played.slice(1)).toEqual([...Array.from({ length: 10 }, (_, i) => i), ...Array(8).fill('L'), ...Array.from({ length: 12 }, (_, i) => 18 + i)]);
    // Eight ticks concealed, one gap heard.
    expect(buffer.stats()).toMatchObject({ lost: 8, late: 0, concealed: 8, gaps: 1 });
  });

  it('plays straight through the sequence wrap at 65535 and the timestamp wrap at 2^32', () => {
    const buffer = newBuffer();
    const arrivals = stream(65530, 12).map((a, i) => ({ ...a, timestamp: 2 ** 32 - 3 * 160 + i * 160 }));
    const played = run(buffer, arrivals, 14);
    expect(frames(played)).toEqual([65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2, 3, 4, 5]);
    expect(buffer.stats()).toMatchObject({ lost: 0, jitterMs: 0 });
    expect(buffer.reception()!.extendedHighestSeq).toBe(65536 + 5);
  });

  it('handles loss and reordering across the sequence wrap', () => {
    const buffer = newBuffer({ minDelayMs: 40 });
    const arrivals = stream(65533, 8)
      .filter((a) => a.seq !== 65535)
      .map((a) => (a.seq === 0 ? { ...a, at: a.at + 30 } : a));
    expect(run(buffer, arrivals, 11).slice(2)).toEqual([65533, 65534, 'L', 0, 1, 2, 3, 4, 'L']);
    expect(buffer.stats().lost).toBe(1);
    // The concealment after the last frame is the stream's end, not a gap in it.
    expect(buffer.stats()).toMatchObject({ concealed: 2, gaps: 1 });
  });

  it('starts over after a pause in the stream without dropping the frames that follow it', () => {
    const buffer = newBuffer();
    // Sequence numbers run on, but nothing is sent for 500 ms (silence suppression): the
    // timestamps jump by the pause, so the jitter estimate does not move.
    const arrivals = [...stream(0, 10), ...stream(10, 10, 700).map((a) => ({ ...a, timestamp: (a.seq + 25) * 160 }))];
    const played = run(buffer, arrivals, 50);
    expect(frames(played)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(buffer.stats()).toMatchObject({ late: 0, lost: 0, discarded: 0 });
    const resumedAt = played.indexOf(10);
    // Arrived at 700, played at the first tick at least 20 ms later (ticks at 5 + k·20).
    expect(5 + resumedAt * 20).toBe(725);
  });

  it('drops the frames a stalled sender sends late in a burst once a later one has played, instead of playing them seconds later', () => {
    const buffer = newBuffer();
    // Frames 10–15 are due every 20 ms but come together 100 ms late; then the stream runs on,
    // with one loss (frame 40) that makes the buffer look for the earliest frame it holds.
    const arrivals = [...stream(0, 10), ...stream(10, 6).map((a) => ({ ...a, at: 300 })), ...stream(16, 24, 320), ...stream(41, 20, 820)];
    const played = run(buffer, arrivals, 60);
    const order = frames(played);
    // Whatever was dropped was dropped for good: nothing plays out of order.
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order).toContain(15);
    const dropped = Array.from({ length: 15 }, (_, i) => i).filter((seq) => !order.includes(seq));
    expect(dropped.length).toBeGreaterThan(0);
    expect(buffer.stats().late).toBe(dropped.length);
    // The loss at 40 is concealed, not filled with a stale frame.
    expect(played[played.indexOf(39) + 1]).toBe('L');
  });

  it('ignores a single packet from a foreign SSRC, and switches when a new source sends two in sequence', () => {
    const buffer = newBuffer();
    const stray: Arrival = { seq: 9999, at: 101, ssrc: 666 };
    const newSource = stream(5000, 10, 400).map((a) => ({ ...a, ssrc: 2 }));
    const played = run(buffer, [...stream(0, 15), stray, ...newSource], 31);
    expect(frames(played)).toEqual([...Array.from({ length: 15 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 5000 + i)]);
    expect(buffer.stats()).toMatchObject({ sourceChanges: 1, received: 10, lost: 0 });
    expect(buffer.reception()!.ssrc).toBe(2);
    // Between the sources (ticks at 325–405) the caller is told to conceal, not to wait for a first frame.
    expect(played.slice(16, 21)).toEqual(['L', 'L', 'L', 'L', 'L']);
    expect(played[21]).toBe(5000);
  });

  it('sets aside packets of other payload types for the statistics only', () => {
    const buffer = newBuffer();
    const arrivals = stream(0, 12).map((a) => (a.seq >= 4 && a.seq < 7 ? { ...a, payloadType: 101, timestamp: 4 * 160 } : a));
    const played = run(buffer, arrivals, 14);
    expect(frames(played)).toEqual([0, 1, 2, 3, 7, 8, 9, 10, 11]);
    expect(buffer.stats()).toMatchObject({ received: 12, lost: 0, late: 0 });
  });

  it('drops a stray sequence number far ahead without disturbing playout', () => {
    const buffer = newBuffer();
    const played = run(buffer, [...stream(0, 10), { seq: 30000, at: 90 }], 12);
    expect(frames(played)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(buffer.stats().discarded).toBe(1);
  });

  it('restarts playout when the sender restarts its numbering', () => {
    const buffer = newBuffer();
    const played = run(buffer, [...stream(100, 5), ...stream(40000, 5, 100)], 12);
    expect(frames(played)).toEqual([100, 101, 102, 103, 104, 40000, 40001, 40002, 40003, 40004].filter((s) => s !== 40000));
  });

  it('raises the delay with the measured jitter, up to the maximum', () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    const calm = newBuffer();
    run(calm, stream(0, 200), 205);
    expect(calm.stats().targetDelayMs).toBe(20);
    const jittery = newBuffer();
    const played = run(
      jittery,
      stream(0, 500, 0, () => random() * 15),
      505,
    );
    expect(jittery.stats().jitterMs).toBeGreaterThan(3);
    expect(jittery.stats().targetDelayMs).toBeGreaterThan(25);
    expect(jittery.stats().targetDelayMs).toBeLessThanOrEqual(60);
    expect(frames(played).length + jittery.stats().late + jittery.stats().discarded).toBe(500);
    // Once the delay has grown, frames stop arriving too late.
    expect(frames(played.slice(250)).length).toBeGreaterThan(245);
    const wild = newBuffer();
    run(
      wild,
      stream(0, 300, 0, () => random() * 200),
      320,
    );
    expect(wild.stats().targetDelayMs).toBe(60);
  });

  it('drops a frame now and then when the sender runs fast, so the delay stays bounded', () => {
    const buffer = newBuffer();
    const arrivals = Array.from({ length: 1000 }, (_, i) => ({ seq: i, at: i * 19.8 }));
    run(buffer, arrivals, 990);
    expect(buffer.stats().discarded).toBeGreaterThan(0);
    expect(buffer.stats().delayMs).toBeLessThan(buffer.stats().targetDelayMs + 40);
    expect(buffer.stats().late).toBe(0);
  });

  it('conceals now and then when the sender runs slow, without dropping frames', () => {
    const buffer = newBuffer();
    const arrivals = Array.from({ length: 500 }, (_, i) => ({ seq: i, at: i * 20.2 }));
    const played = run(buffer, arrivals, 510);
    expect(frames(played)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(buffer.stats().concealed).toBeGreaterThan(0);
    expect(buffer.stats()).toMatchObject({ late: 0, lost: 0 });
  });

  it('discards the oldest frames when nobody pops', () => {
    const buffer = newBuffer({ capacity: 50 });
    for (const arrival of stream(0, 60)) buffer.push(packet(arrival), arrival.at);
    expect(buffer.stats().discarded).toBe(10);
    expect(buffer.flush().map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => 10 + i));
    expect(buffer.flush()).toEqual([]);
  });

  it('hands out what it holds in order on flush', () => {
    const buffer = newBuffer();
    for (const seq of [5, 3, 4]) buffer.push(packet({ seq, at: 0 }), 0);
    expect(buffer.flush().map((p) => p.sequenceNumber)).toEqual([3, 4, 5]);
  });

  it('forgets everything on reset', () => {
    const buffer = newBuffer();
    run(buffer, stream(0, 10), 12);
    buffer.reset();
    expect(buffer.pop(1000)).toBeNull();
    expect(buffer.reception()).toBeNull();
    expect(buffer.stats()).toMatchObject({ received: 0, concealed: 0, sourceChanges: 0 });
    expect(frames(run(buffer, stream(7, 3, 2000), 5, 2005))).toEqual([7, 8, 9]);
  });
});
