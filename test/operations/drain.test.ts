/** The drain's state and its wait for running work: the refusal it gives, and the three ways the wait ends. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { DRAIN_RETRY_AFTER_S, Drain } from '../../src/operations/drain.js';

describe('Drain', () => {
  it('lets requests in and counts them until it starts, then refuses them by family', () => {
    const drain = new Drain();
    const release = drain.admitRequest('tts');
    expect(drain.requestsInFlight).toBe(1);
    release();
    release();
    expect(drain.requestsInFlight).toBe(0);
    const heard: string[] = [];
    drain.onStart((start) => heard.push(start.reason));
    expect(drain.start('SIGTERM')).toBe(true);
    expect(drain.start('operator')).toBe(false);
    drain.onStart((start) => heard.push(`late ${start.reason}`));
    expect(heard).toEqual(['SIGTERM', 'late SIGTERM']);
    for (const family of ['tts', 'stt'] as const) {
      let refusal: unknown;
      try {
        drain.admitRequest(family);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(ApiError);
      expect((refusal as ApiError).code).toBe(`${family}.unavailable`);
      expect((refusal as ApiError).httpStatus).toBe(503);
      expect((refusal as ApiError).retryAfterSeconds).toBe(DRAIN_RETRY_AFTER_S);
    }
    expect(drain.requestsInFlight).toBe(0);
  });

  it('waits until nothing runs', async () => {
    const drain = new Drain();
    drain.start('SIGTERM');
    let calls = 2;
    setTimeout(() => (calls = 0), 150);
    expect(await drain.waitForIdle(() => ({ calls, sessions: 0 }), 60_000)).toEqual({});
  });

  it('stops waiting at the deadline and says what still runs', async () => {
    const drain = new Drain();
    drain.start('SIGTERM');
    const started = performance.now();
    expect(await drain.waitForIdle(() => ({ calls: 1, sessions: 0 }), 200)).toEqual({ calls: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('stops waiting at once when told to', async () => {
    const drain = new Drain();
    drain.start('SIGTERM');
    const waiting = drain.waitForIdle(() => ({ requests: 3 }), 60_000);
    setTimeout(() => drain.endWait(), 50);
    expect(await waiting).toEqual({ requests: 3 });
  });
});
