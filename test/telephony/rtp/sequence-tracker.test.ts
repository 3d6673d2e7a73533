/** RFC 3550 appendix A receive statistics: wraps, reordering, duplicates, restarts, loss and jitter. */
import { describe, expect, it } from 'vitest';
import { SEQ_DUPLICATE, SEQ_INVALID, SequenceTracker } from '../../../src/telephony/rtp/sequence-tracker.js';

/** Tracks `seqs` arriving 20 ms apart, timestamps following the sequence numbers; returns the extended numbers. */
function trackAll(tracker: SequenceTracker, seqs: number[]): number[] {
  return seqs.map((seq, i) => tracker.track(seq, (((seq - seqs[0]!) & 0xffff) * 160) >>> 0, i * 20));
}

describe('SequenceTracker', () => {
  it('numbers packets on across the 16-bit wrap', () => {
    const tracker = new SequenceTracker(8000);
    const ext = trackAll(tracker, [65533, 65534, 65535, 0, 1, 2]);
    expect(ext.map((e) => e - ext[0]!)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(tracker.stats(7)).toEqual({ ssrc: 7, extendedHighestSeq: 65536 + 2, expected: 6, received: 6, cumulativeLost: 0, jitter: 0 });
  });

  it('places a packet reordered across the wrap in the previous cycle', () => {
    const tracker = new SequenceTracker(8000);
    const [a, b, c, d] = trackAll(tracker, [65534, 0, 65535, 1]);
    expect([b! - a!, c! - a!, d! - a!]).toEqual([2, 1, 3]);
    expect(tracker.stats(1).extendedHighestSeq).toBe(65536 + 1);
    expect(tracker.stats(1).cumulativeLost).toBe(0);
  });

  it('keeps packets reordered before the very first one positive and counted', () => {
    const tracker = new SequenceTracker(8000);
    const [first, earlier] = trackAll(tracker, [0, 65530]);
    expect(earlier).toBeGreaterThan(0);
    expect(first! - earlier!).toBe(6);
    expect(tracker.stats(1)).toMatchObject({ expected: 7, received: 2, cumulativeLost: 5, extendedHighestSeq: 0 });
  });

  it('reports duplicates, which count neither as received nor against loss', () => {
    const tracker = new SequenceTracker(8000);
    expect(trackAll(tracker, [10, 11, 11, 12, 10]).slice(2)).toEqual([SEQ_DUPLICATE, expect.any(Number), SEQ_DUPLICATE]);
    expect(tracker.stats(1)).toMatchObject({ expected: 3, received: 3, cumulativeLost: 0 });
  });

  it('counts gaps as lost and late arrivals as received', () => {
    const tracker = new SequenceTracker(8000);
    trackAll(tracker, [100, 101, 105, 106]);
    expect(tracker.stats(1)).toMatchObject({ expected: 7, received: 4, cumulativeLost: 3 });
    tracker.track(103, 103 * 160, 200);
    expect(tracker.stats(1)).toMatchObject({ expected: 7, received: 5, cumulativeLost: 2 });
  });

  it('ignores one stray packet far from the sequence, and restarts when a second one continues it', () => {
    const tracker = new SequenceTracker(8000);
    trackAll(tracker, [1000, 1001, 1002]);
    expect(tracker.track(40000, 0, 60)).toBe(SEQ_INVALID);
    expect(tracker.restarted).toBe(false);
    expect(tracker.track(1003, 1003 * 160, 80)).toBeGreaterThan(0);
    expect(tracker.stats(1)).toMatchObject({ expected: 4, received: 4 });
    // 3000 ahead is the edge: a sender may lose a minute of packets, not more.
    expect(tracker.track(1003 + 3000, 0, 100)).toBe(SEQ_INVALID);
    expect(tracker.track(20000, 0, 120)).toBe(SEQ_INVALID);
    const restartedAt = tracker.track(20001, 0, 140);
    expect(tracker.restarted).toBe(true);
    expect(restartedAt).toBeGreaterThan(0);
    expect(tracker.stats(1)).toMatchObject({ expected: 1, received: 1, cumulativeLost: 0 });
    expect(tracker.track(20002, 0, 160) - restartedAt).toBe(1);
    expect(tracker.restarted).toBe(false);
  });

  it('takes packets up to 100 behind as reordered, not as strays', () => {
    const tracker = new SequenceTracker(8000);
    trackAll(tracker, [500, ...Array.from({ length: 120 }, (_, i) => 502 + i)]);
    expect(tracker.track(501, 501 * 160, 5000)).toBe(SEQ_INVALID);
    const tracker2 = new SequenceTracker(8000);
    trackAll(tracker2, [500, ...Array.from({ length: 90 }, (_, i) => 502 + i)]);
    expect(tracker2.track(501, 501 * 160, 5000)).toBeGreaterThan(0);
  });

  it('estimates no jitter for evenly spaced packets, also across the timestamp wrap', () => {
    const tracker = new SequenceTracker(8000);
    const start = 2 ** 32 - 5 * 160;
    for (let i = 0; i < 20; i++) tracker.track(i, (start + i * 160) >>> 0, 1000 + i * 20);
    expect(tracker.stats(1).jitter).toBe(0);
    expect(tracker.jitterMs).toBe(0);
  });

  it('converges on the mean deviation of the transit time (RFC 3550 A.8)', () => {
    const tracker = new SequenceTracker(8000);
    // Transit alternating 0 and 10 ms: every D is 10 ms = 80 units, so J tends to 80.
    for (let i = 0; i < 400; i++) tracker.track(i & 0xffff, i * 160, i * 20 + (i % 2) * 10);
    expect(tracker.stats(1).jitter).toBeCloseTo(80, 3);
    expect(tracker.jitterMs).toBeCloseTo(10, 3);
  });

  it('takes a timestamp jump of more than a second for the sender moving its clock, not for jitter', () => {
    const tracker = new SequenceTracker(8000);
    for (let i = 0; i < 10; i++) tracker.track(i, i * 160, i * 20);
    for (let i = 10; i < 20; i++) tracker.track(i, 5_000_000 + i * 160, i * 20);
    expect(tracker.jitterMs).toBe(0);
    tracker.track(20, 5_000_000 + 20 * 160, 20 * 20 + 400);
    expect(tracker.jitterMs).toBeCloseTo(400 / 16, 6);
  });

  it('leaves the jitter alone for packets that do not follow the media clock', () => {
    const tracker = new SequenceTracker(8000);
    for (let i = 0; i < 10; i++) tracker.track(i, 0, i * 20, false);
    expect(tracker.jitterMs).toBe(0);
    expect(tracker.stats(1).received).toBe(10);
  });

  it('forgets the source on reset', () => {
    const tracker = new SequenceTracker(8000);
    trackAll(tracker, [1, 2, 3]);
    tracker.reset();
    expect(tracker.stats(1)).toMatchObject({ expected: 0, extendedHighestSeq: 0 });
    expect(trackAll(tracker, [60000, 60001])[1]).toBeGreaterThan(0);
    expect(tracker.stats(1)).toMatchObject({ expected: 2, received: 2, extendedHighestSeq: 60001 });
  });
});
