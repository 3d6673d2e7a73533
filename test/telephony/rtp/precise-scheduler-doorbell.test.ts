/**
 * The precise scheduler's doorbell (src/telephony/rtp/precise-scheduler.ts): work another thread
 * rings for runs during the wait for a deadline, not after it; never so close to the deadline
 * that the timer would be late; and work that clears the timer stops it from firing.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createPreciseScheduler, DOORBELL_MARGIN_MS } from '../../../src/telephony/rtp/precise-scheduler.js';

const ring = (word: Int32Array): void => {
  Atomics.add(word, 0, 1);
  Atomics.notify(word, 0);
};

describe('a precise scheduler with a doorbell', () => {
  it('answers a ring that came before its wait, before the deadline, and then fires on time', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const answered: number[] = [];
    const scheduler = createPreciseScheduler({ word, answer: (deadline) => answered.push(deadline - scheduler.now()) });
    const deadline = scheduler.now() + 10;
    const fired = new Promise<number>((resolve) => scheduler.setTimer(() => resolve(scheduler.now() - deadline), 10));
    ring(word);
    const late = await fired;
    expect(answered).toHaveLength(1);
    expect(answered[0]).toBeGreaterThan(DOORBELL_MARGIN_MS);
    expect(late).toBeGreaterThanOrEqual(0);
    // Seen once: the next wait does not answer it again.
    await new Promise<void>((resolve) => scheduler.setTimer(resolve, 5));
    expect(answered).toHaveLength(1);
  });

  it('answers a ring from another thread while it sleeps, not only once the timer has fired', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const go = new Int32Array(new SharedArrayBuffer(4));
    /** When the worker rang (absolute milliseconds). */
    const rangAt = new Float64Array(new SharedArrayBuffer(8));
    // Rings 1.5 ms after it is told to go: within the scheduler's blocking wait of its last 3 ms.
    const worker = new Worker(
      `const { workerData: { word, go, rangAt } } = require('node:worker_threads');
       Atomics.wait(go, 0, 0);
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1.5);
       rangAt[0] = performance.timeOrigin + performance.now();
       Atomics.add(word, 0, 1);
       Atomics.notify(word, 0);`,
      { eval: true, workerData: { word, go, rangAt } },
    );
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      let answeredAt = 0;
      const scheduler = createPreciseScheduler({ word, answer: () => (answeredAt = scheduler.now()) });
      const deadline = scheduler.now() + 30;
      const firedAt = await new Promise<number>((resolve) => {
        scheduler.setTimer(() => resolve(scheduler.now()), 30);
        // Just before the scheduler's Node timer (3 ms before the deadline), which then blocks this thread.
        setTimeout(() => {
          Atomics.store(go, 0, 1);
          Atomics.notify(go, 0);
        }, 26.5);
      });
      expect(firedAt).toBeGreaterThanOrEqual(deadline);
      // A busy machine may have let the ring come too late to count; when it came in time, it was answered in the wait.
      if (rangAt[0]! - performance.timeOrigin < deadline - 1) {
        expect(answeredAt).toBeGreaterThan(0);
        expect(answeredAt).toBeLessThan(deadline);
      }
    } finally {
      await worker.terminate();
    }
  });

  it('leaves a ring too close to the deadline for after it', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    let answers = 0;
    const scheduler = createPreciseScheduler({ word, answer: () => answers++ });
    ring(word);
    await new Promise<void>((resolve) => scheduler.setTimer(resolve, DOORBELL_MARGIN_MS / 2));
    expect(answers).toBe(0);
  });

  it('does not fire when the work it answered cleared it', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    let fired = false;
    let handle: unknown = null;
    const scheduler = createPreciseScheduler({ word, answer: () => scheduler.clearTimer(handle) });
    handle = scheduler.setTimer(() => (fired = true), 8);
    ring(word);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fired).toBe(false);
  });
});
