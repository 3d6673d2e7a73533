/**
 * The outgoing frame queue: frames come out as they went in (bytes, payload type, marker,
 * repeated timestamp) through wrap-arounds of its buffers, growth in the middle of a wrap,
 * runs, empty payloads and clears; checked against a plain array over thousands of random steps.
 */
import { describe, expect, it } from 'vitest';
import { FrameQueue, type FrameRun } from '../../../src/telephony/rtp/frame-queue.js';

interface Model {
  readonly bytes: number[];
  readonly payloadType: number | undefined;
  readonly marker: boolean | undefined;
  readonly repeatsTimestamp: boolean;
}

/** A deterministic pseudo-random sequence (so a failure repeats). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function takeAll(queue: FrameQueue): Model[] {
  const out: Model[] = [];
  for (let frame = queue.shift(); frame; frame = queue.shift())
    out.push({ bytes: [...frame.payload], payloadType: frame.payloadType, marker: frame.marker, repeatsTimestamp: frame.repeatsTimestamp });
  return out;
}

describe('FrameQueue', () => {
  it('gives frames back in order with their options, and single frames and runs mix', () => {
    const queue = new FrameQueue(2, 8);
    queue.push(new Uint8Array([1, 2]));
    queue.pushRun({ data: new Uint8Array([3, 4, 5, 6, 7]), ends: new Uint32Array([2, 5]) });
    queue.push(new Uint8Array([9, 9, 9, 9]), 101, true, false);
    queue.push(new Uint8Array([8]), 101, false, true);
    expect(queue.length).toBe(5);
    expect(takeAll(queue)).toEqual([
      { bytes: [1, 2], payloadType: undefined, marker: undefined, repeatsTimestamp: false },
      { bytes: [3, 4], payloadType: undefined, marker: undefined, repeatsTimestamp: false },
      { bytes: [5, 6, 7], payloadType: undefined, marker: undefined, repeatsTimestamp: false },
      { bytes: [9, 9, 9, 9], payloadType: 101, marker: true, repeatsTimestamp: false },
      { bytes: [8], payloadType: 101, marker: false, repeatsTimestamp: true },
    ]);
    expect(queue.length).toBe(0);
    expect(queue.shift()).toBeNull();
  });

  it('keeps a queue that never grows once it has room: frames wrap around the buffer end', () => {
    const queue = new FrameQueue(4, 10);
    const out: number[][] = [];
    for (let n = 0; n < 50; n++) {
      queue.push(new Uint8Array([n, n, n]));
      if (n >= 2) out.push([...queue.shift()!.payload]);
    }
    out.push(...takeAll(queue).map((frame) => frame.bytes));
    expect(out).toEqual(Array.from({ length: 50 }, (_, n) => [n, n, n]));
    expect(queue.byteCapacity).toBe(10);
  });

  it('wraps into exactly the room before the oldest frame, and grows rather than overwrite a byte of it', () => {
    const bytes = (fill: number, length: number): Uint8Array => new Uint8Array(length).fill(fill);
    const queue = new FrameQueue(8, 10);
    queue.push(bytes(1, 4)); // 0–4
    queue.push(bytes(2, 4)); // 4–8
    queue.shift();
    queue.push(bytes(3, 4)); // 2 bytes left at the end: wraps to 0–4, right up to the oldest frame
    expect(queue.byteCapacity).toBe(10);
    queue.push(bytes(4, 1)); // no room before the oldest frame: grows
    expect(queue.byteCapacity).toBe(20);
    expect(takeAll(queue).map((frame) => frame.bytes)).toEqual([[2, 2, 2, 2], [3, 3, 3, 3], [4]]);

    const unwrapped = new FrameQueue(8, 10);
    unwrapped.push(bytes(1, 4)); // 0–4
    unwrapped.push(bytes(2, 4)); // 4–8
    unwrapped.shift();
    unwrapped.push(bytes(3, 5)); // 5 bytes do not fit before the oldest frame at 4: grows
    expect(unwrapped.byteCapacity).toBe(20);
    expect(takeAll(unwrapped).map((frame) => frame.bytes)).toEqual([
      [2, 2, 2, 2],
      [3, 3, 3, 3, 3],
    ]);
  });

  it('goes back to its first size once a long queue (over 128 KB) has played out or been cleared', () => {
    const queue = new FrameQueue(64, 64 * 172);
    const frame = new Uint8Array(160).fill(7);
    for (let n = 0; n < 1000; n++) queue.push(frame); // 20 s of G.711
    expect(queue.byteCapacity).toBeGreaterThan(128 * 1024);
    let last: number[] = [];
    for (let taken = queue.shift(); taken; taken = queue.shift()) last = [...taken.payload];
    expect(last).toEqual([...frame]); // the last frame's view survives the shrink
    expect(queue.byteCapacity).toBe(64 * 172);
    for (let n = 0; n < 1000; n++) queue.push(frame);
    queue.clear();
    expect(queue.byteCapacity).toBe(64 * 172);
    queue.push(new Uint8Array([1, 2, 3]));
    expect(takeAll(queue).map((taken) => taken.bytes)).toEqual([[1, 2, 3]]);
  });

  it('matches a plain array over random pushes, runs, takes and clears of frames 0–300 bytes long', () => {
    const next = random(7);
    const queue = new FrameQueue(2, 16);
    const model: Model[] = [];
    let value = 0;
    const payload = (length: number): Uint8Array => Uint8Array.from({ length }, () => value++ & 0xff);
    for (let step = 0; step < 20_000; step++) {
      // Stretches that fill the queue and stretches that drain it, so it wraps both nearly empty and nearly full.
      const draining = Math.floor(step / 500) % 2 === 1;
      const roll = next();
      const action = roll < (draining ? 0.1 : 0.35) ? 'push' : roll < (draining ? 0.15 : 0.5) ? 'run' : roll < 0.995 ? 'shift' : 'clear';
      if (action === 'push') {
        const bytes = payload(Math.floor(next() * 301));
        const payloadType = next() < 0.2 ? 101 : undefined;
        const marker = next() < 0.3 ? next() < 0.5 : undefined;
        const repeatsTimestamp = next() < 0.2;
        queue.push(bytes, payloadType, marker, repeatsTimestamp);
        model.push({ bytes: [...bytes], payloadType, marker, repeatsTimestamp });
      } else if (action === 'run') {
        const lengths = Array.from({ length: 1 + Math.floor(next() * 6) }, () => Math.floor(next() * 200));
        const data = payload(lengths.reduce((sum, length) => sum + length, 0));
        const ends = new Uint32Array(lengths.length);
        lengths.reduce((end, length, n) => (ends[n] = end + length), 0);
        const run: FrameRun = { data, ends };
        queue.pushRun(run);
        lengths.reduce((start, length) => {
          model.push({ bytes: [...data.subarray(start, start + length)], payloadType: undefined, marker: undefined, repeatsTimestamp: false });
          return start + length;
        }, 0);
      } else if (action === 'shift') {
        const frame = queue.shift();
        const expected = model.shift();
        if (!expected) expect(frame).toBeNull();
        else
          expect({ bytes: [...frame!.payload], payloadType: frame!.payloadType, marker: frame!.marker, repeatsTimestamp: frame!.repeatsTimestamp }).toEqual(
            expected,
          );
      } else {
        queue.clear();
        model.length = 0;
      }
      expect(queue.length).toBe(model.length);
    }
    expect(takeAll(queue)).toEqual(model);
  });
});
