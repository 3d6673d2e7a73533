/** Placeholders are filled from the call's variables; inside markup a caller's words stay text. */
import { describe, expect, it } from 'vitest';
import { fillPlaceholders } from '../../src/dialplan/placeholders.js';

describe('placeholders', () => {
  it('fills known variables, leaves unknown ones empty, and escapes values inside <speak> markup', () => {
    const vars = { heard: 'a <b> & c', digits: '42' };
    expect(fillPlaceholders('You said {{heard}} and {{ digits }}, {{nothing}}.', vars)).toBe('You said a <b> & c and 42, .');
    expect(fillPlaceholders('<speak>You said {{heard}}.</speak>', vars)).toBe('<speak>You said a &lt;b&gt; &amp; c.</speak>');
  });
});
