/**
 * The media thread's timer with I/O let in during its waits (src/telephony/rtp/precise-scheduler.ts,
 * tested here beside the bridge that needs it): still never early, and a datagram that arrives
 * during the last milliseconds before the deadline is read then, not after the timer has fired.
 */
import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { createPreciseScheduler } from '../../../src/telephony/rtp/precise-scheduler.js';

describe('a precise scheduler that lets I/O in', () => {
  it('never fires before its deadline, in slices or not, including timers shorter than its early margin', async () => {
    const scheduler = createPreciseScheduler();
    scheduler.letIoIn = true;
    const fireAfter = (delay: number): Promise<number> => {
      const deadline = scheduler.now() + delay;
      return new Promise((resolve) => scheduler.setTimer(() => resolve(scheduler.now() - deadline), delay));
    };
    // One after the other, and several at once.
    for (const delay of [0, 0.3, 2.5, 7.3]) expect(await fireAfter(delay)).toBeGreaterThanOrEqual(0);
    const together = await Promise.all([1, 1.7, 4, 19.9].map(fireAfter));
    expect(together.every((late) => late >= 0)).toBe(true);
  });

  it('reads a datagram that arrives while it waits for the deadline, and not while I/O is held back', async () => {
    const receiver = dgram.createSocket('udp4');
    const sender = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => receiver.bind(0, '127.0.0.1', resolve));
    try {
      /** Whether the datagram was read before the timer fired, and whether it was sent well before the deadline. */
      const readBeforeFiring = async (letIoIn: boolean): Promise<{ read: boolean; sentInTime: boolean }> => {
        const scheduler = createPreciseScheduler();
        scheduler.letIoIn = letIoIn;
        let read = false;
        let sentAt = Infinity;
        receiver.once('message', () => (read = true));
        const start = scheduler.now();
        // Due just before the precise timer's own Node timer (15 − 3 ms): both run in one pass of
        // the timers once the busy wait is over, the datagram sent first.
        setTimeout(() => {
          sentAt = scheduler.now();
          sender.send('x', receiver.address().port, '127.0.0.1');
        }, 11);
        const fired = new Promise<boolean>((resolve) => scheduler.setTimer(() => resolve(read), 15));
        while (scheduler.now() < start + 12.05);
        const result = await fired;
        await new Promise((resolve) => setTimeout(resolve, 10));
        // A busy machine may hold the thread past the deadline before the timers run; then there
        // was no wait to let the datagram in, and the run says nothing.
        return { read: result, sentInTime: sentAt < start + 14 };
      };
      // Held back, the datagram is never read before the timer fires, however late the run.
      expect((await readBeforeFiring(false)).read).toBe(false);
      // Let in, it is read during the wait: up to ten runs, the first sent in time counts.
      for (let run = 0; run < 10; run++) {
        const { read, sentInTime } = await readBeforeFiring(true);
        if (!sentInTime) continue;
        expect(read).toBe(true);
        return;
      }
      throw new Error('no run sent the datagram before the deadline');
    } finally {
      receiver.close();
      sender.close();
    }
  });

  it('can be cleared while it waits in slices', async () => {
    // The moment is narrow (after the Node timer fired, before the deadline): on a busy machine
    // a run may miss it, so up to ten runs are made and the first that clears in time counts.
    for (let run = 0; run < 10; run++) {
      const scheduler = createPreciseScheduler();
      scheduler.letIoIn = true;
      let fired = false;
      const start = scheduler.now();
      const handle = scheduler.setTimer(() => (fired = true), 20);
      // Past its Node timer's time (20 − 3 ms), with most of the precise wait still ahead.
      while (scheduler.now() < start + 17.05);
      const nextCheck = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
      // The first turn's check phase; in the next turn the Node timer fires and queues its first
      // slice behind this second immediate, so the timer is cleared between slices.
      await nextCheck();
      await nextCheck();
      const clearedInTime = scheduler.now() < start + 19.5;
      scheduler.clearTimer(handle);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (!clearedInTime) continue;
      expect(fired).toBe(false);
      return;
    }
    throw new Error('no run reached the moment between the Node timer and the deadline');
  });
});
