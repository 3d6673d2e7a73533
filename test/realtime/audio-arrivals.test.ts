/** Timing a transcript from the arrival of the audio it covers. */
import { describe, expect, it } from 'vitest';
import { AudioArrivals } from '../../src/realtime/audio-arrivals.js';

describe('AudioArrivals', () => {
  it('times from the write that brought the audio up to the covered point', () => {
    const arrivals = new AudioArrivals();
    arrivals.arrived(0.02, 1000);
    arrivals.arrived(0.04, 1020);
    arrivals.arrived(0.06, 1040);
    expect(arrivals.lagMs(0.04, 1100)).toBe(80);
    expect(arrivals.lagMs(0.03, 1100)).toBe(80);
    // An earlier point after a later one (a final's end after a partial): still found.
    expect(arrivals.lagMs(0.02, 1100)).toBe(100);
    expect(arrivals.lagMs(0.06, 1100)).toBe(60);
    expect(arrivals.lagMs(0.08, 1100)).toBe(null);
  });

  it('forgets old writes but keeps a minute of frames', () => {
    const arrivals = new AudioArrivals();
    for (let i = 1; i <= 10_000; i++) arrivals.arrived(i * 0.02, i * 20);
    expect(arrivals.lagMs(200, 200_000)).toBe(0);
    expect(arrivals.lagMs(150, 200_000)).toBe(50_000);
  });
});
