import { describe, expect, it } from 'vitest';
import { TextSegmenter } from '../../src/speech/text-segmenter.js';

describe('the text segmenter of realtime synthesis', () => {
  it('gives out each sentence once it is complete, and the rest on flush', () => {
    const segmenter = new TextSegmenter();
    expect(segmenter.append('Grüezi mit')).toEqual([]);
    expect(segmenter.append('enand. Wie ')).toEqual(['Grüezi mitenand.']);
    expect(segmenter.append('geht es? Gut! «Sehr gut.» Und')).toEqual(['Wie geht es?', 'Gut!', '«Sehr gut.»']);
    expect(segmenter.pendingCharacters).toBe(3);
    expect(segmenter.flush()).toEqual(['Und']);
    expect(segmenter.flush()).toEqual([]);
  });

  it('waits at a full stop without a following space (a number, an abbreviation in progress)', () => {
    const segmenter = new TextSegmenter();
    expect(segmenter.append('Es kostet 3.')).toEqual([]);
    expect(segmenter.append('50 Franken.\n')).toEqual(['Es kostet 3.50 Franken.']);
  });

  it('speaks a <speak> document at once, after what was waiting', () => {
    const segmenter = new TextSegmenter();
    segmenter.append('Zuerst dies');
    expect(segmenter.append('<speak>Dann <break time="200ms"/> das.</speak>')).toEqual(['Zuerst dies', '<speak>Dann <break time="200ms"/> das.</speak>']);
  });

  it('cuts a long text without sentence ends at a space', () => {
    const segmenter = new TextSegmenter();
    const segments = segmenter.append('wort '.repeat(200));
    expect(segments.length).toBeGreaterThanOrEqual(2);
    for (const segment of segments) expect(segment.length).toBeLessThanOrEqual(400);
    expect([...segments, ...segmenter.flush()].join(' ').split(' ').length).toBe(200);
  });
});
