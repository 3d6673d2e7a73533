/** A tick's caller audio of every call in one buffer, and each frame back as a view with its call. */
import { describe, expect, it } from 'vitest';
import { AudioBatch, framesOf } from '../../../src/telephony/media/audio-batch.js';

describe('AudioBatch', () => {
  it('gives back every frame with its call, in order, then starts empty', () => {
    const batch = new AudioBatch();
    batch.add(7, Int16Array.from([1, 2, 3]));
    batch.add(9, Int16Array.from([4, 5]));
    batch.add(7, Int16Array.from([6]));
    expect(batch.size).toBe(3);
    const frames = [...framesOf(batch.take())].map(([call, pcm]) => [call, [...pcm]]);
    expect(frames).toEqual([
      [7, [1, 2, 3]],
      [9, [4, 5]],
      [7, [6]],
    ]);
    expect(batch.size).toBe(0);
    expect([...framesOf(batch.take())]).toEqual([]);
  });

  it('grows past its first size (a tick of 1,000 calls, Opus frames of 320 samples)', () => {
    const batch = new AudioBatch();
    for (let call = 0; call < 1000; call++) batch.add(call, new Int16Array(320).fill(call));
    const frames = [...framesOf(batch.take())];
    expect(frames.length).toBe(1000);
    for (const [call, pcm] of frames) {
      expect(pcm.length).toBe(320);
      expect(pcm[0]).toBe(call);
      expect(pcm[319]).toBe(call);
    }
  });

  it('keeps what it handed out when it is filled again (the copies are the receiver’s)', () => {
    const batch = new AudioBatch();
    batch.add(1, Int16Array.from([1, 1]));
    const first = batch.take();
    batch.add(2, Int16Array.from([2, 2]));
    batch.take();
    expect([...first.samples]).toEqual([1, 1]);
  });
});
