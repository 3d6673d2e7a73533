/** The media thread's timer: never early, and close to its deadline on a quiet machine. */
import { describe, expect, it } from 'vitest';
import { preciseScheduler } from '../../../src/telephony/rtp/precise-scheduler.js';

describe('preciseScheduler', () => {
  it('never fires before its deadline, including timers shorter than its early margin', async () => {
    const runs = [0, 0.3, 1, 1.7, 2.5, 7.3, 19.9];
    const lateness = await Promise.all(
      runs.map(
        (delay) =>
          new Promise<number>((resolve) => {
            const deadline = preciseScheduler.now() + delay;
            preciseScheduler.setTimer(() => resolve(preciseScheduler.now() - deadline), delay);
          }),
      ),
    );
    for (const late of lateness) expect(late).toBeGreaterThanOrEqual(0);
  });

  it('can be cleared before it fires', async () => {
    let fired = false;
    const handle = preciseScheduler.setTimer(() => (fired = true), 5);
    preciseScheduler.clearTimer(handle);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fired).toBe(false);
  });
});
