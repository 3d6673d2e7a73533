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
    // A busy machine may wake the worker or the scheduler late: of up to ten runs, one with the
    // ring in time (a millisecond or more before the deadline) must have it answered in the
    // wait; every answer that came, came before the deadline.
    let answeredInTime = 0;
    for (let run = 0; run < 10 && answeredInTime === 0; run++) {
      const word = new Int32Array(new SharedArrayBuffer(4));
      /** When the worker is to ring, then when it rang (absolute milliseconds). */
      const times = new Float64Array(new SharedArrayBuffer(16));
      const armed = new Int32Array(new SharedArrayBuffer(4));
      // Rings at the absolute time it is given: 1.5 ms before the deadline, within the
      // scheduler's blocking wait of its last 3 ms.
      const worker = new Worker(
        `const { workerData: { word, times, armed } } = require('node:worker_threads');
         Atomics.wait(armed, 0, 0);
         const now = () => performance.timeOrigin + performance.now();
         for (let left = times[0] - now(); left > 0; left = times[0] - now()) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, left);
         times[1] = now();
         Atomics.add(word, 0, 1);
         Atomics.notify(word, 0);`,
        { eval: true, workerData: { word, times, armed } },
      );
      try {
        await new Promise((resolve) => worker.once('online', resolve));
        let answeredAt = 0;
        const scheduler = createPreciseScheduler({ word, answer: () => (answeredAt = scheduler.now()) });
        const deadline = scheduler.now() + 30;
        times[0] = performance.timeOrigin + deadline - 1.5;
        Atomics.store(armed, 0, 1);
        Atomics.notify(armed, 0);
        const firedAt = await new Promise<number>((resolve) => scheduler.setTimer(() => resolve(scheduler.now()), 30));
        expect(firedAt).toBeGreaterThanOrEqual(deadline);
        if (answeredAt > 0) expect(answeredAt).toBeLessThan(deadline);
        const rang = times[1]! - performance.timeOrigin;
        if (rang > 0 && rang < deadline - 1 && answeredAt > 0) answeredInTime += 1;
      } finally {
        await worker.terminate();
      }
    }
    expect(answeredInTime).toBe(1);
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
