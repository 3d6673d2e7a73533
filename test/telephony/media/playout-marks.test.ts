import { describe, expect, it } from 'vitest';
import { PlayoutMarks } from '../../../src/telephony/media/playout-marks.js';

describe('playout marks', () => {
  it('comes due once every frame queued before it has been taken, in order', () => {
    const marks = new PlayoutMarks();
    marks.queue(3);
    expect(marks.add(1)).toBeNull();
    marks.queue(2);
    expect(marks.add(2)).toBeNull();
    expect(marks.take()).toBeNull();
    expect(marks.take()).toBeNull();
    expect(marks.take()).toEqual([{ mark: 1, played: true }]);
    expect(marks.take()).toBeNull();
    expect(marks.take()).toEqual([{ mark: 2, played: true }]);
  });

  it('is due at once when nothing is left to play, and two marks at one place come due together', () => {
    const marks = new PlayoutMarks();
    expect(marks.add(1)).toEqual({ mark: 1, played: true });
    marks.queue(1);
    marks.add(2);
    marks.add(3);
    expect(marks.take()).toEqual([
      { mark: 2, played: true },
      { mark: 3, played: true },
    ]);
    expect(marks.add(4)).toEqual({ mark: 4, played: true });
  });

  it('gives back every pending mark unplayed when the queue is dropped, and counts afresh after', () => {
    const marks = new PlayoutMarks();
    marks.queue(10);
    marks.add(1);
    marks.add(2);
    marks.take();
    expect(marks.drop()).toEqual([
      { mark: 1, played: false },
      { mark: 2, played: false },
    ]);
    expect(marks.drop()).toEqual([]);
    marks.queue(1);
    marks.add(3);
    expect(marks.take()).toEqual([{ mark: 3, played: true }]);
  });
});
