import { describe, expect, it } from 'vitest';
import { chrF, wer } from '../bench/dialect-quality.bench.js';

describe('dialect scoring used by the quality benchmark', () => {
  it('chrF is 100 for identical text, 0 for text without shared characters, and ignores spaces', () => {
    expect(chrF('Grüezi mitenand', 'Grüezi mitenand')).toBeCloseTo(100, 6);
    expect(chrF('xyz', 'abc')).toBe(0);
    expect(chrF('Grüezimitenand', 'Grüezi mitenand')).toBeCloseTo(100, 6);
    const near = chrF('Grüezi mitenand', 'Grüessech mitenand');
    expect(near).toBeGreaterThan(40);
    expect(near).toBeLessThan(90);
  });

  it('WER counts word edits after removing case and punctuation', () => {
    expect(wer('Merci vilmal!', 'merci vilmal')).toBe(0);
    expect(wer('Merci vielmals', 'Merci vilmal')).toBe(0.5);
    expect(wer('', 'eis zwei')).toBe(1);
  });
});
