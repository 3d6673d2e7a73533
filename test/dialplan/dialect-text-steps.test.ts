/**
 * `dialect_text` in dialplans: a prompt written in the dialect is spoken as written (the
 * simulated call prints it after rendering, as callers hear it), the built-in prompts around it
 * are still rendered, and the loader refuses it where it cannot apply, at its line and column.
 */
import { describe, expect, it } from 'vitest';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { checkDialplan, DialplanError } from '../../src/dialplan/dialplan-loader.js';
import { simulateRoute } from '../helpers/simulate-route.js';

const BERNESE = 'Chömed Sie morn wieder, mir sind für Sie da.';

describe('dialect_text in a dialplan', () => {
  it('speaks a say written in the dialect as written, and renders one without it', async () => {
    const { out } = await simulateRoute(
      `      - say: { text: "${BERNESE}", language: de-CH, dialect: bern, dialect_text: true }\n` +
        `      - say: { text: "${BERNESE}", language: de-CH, dialect: bern }\n`,
      [],
    );
    expect(out[0]).toBe(`< ${BERNESE}`);
    // Rendered as if it were Standard German, Bern's data changes it (Sie → Dir).
    expect(out[1]).not.toBe(`< ${BERNESE}`);
  });

  it("keeps a menu's own prompts as written and renders the built-in sorry prompt", async () => {
    const { out } = await simulateRoute(
      `      - menu:\n          prompt: "Drücked Sie d Eis für d Rächnig."\n          language: de-CH\n          dialect: zurich\n          dialect_text: true\n` +
        `          retries: 1\n          options:\n            - { key: "1", goto: bill }\n      - id: bill\n        say: { text: Rächnig., language: de-CH, dialect: zurich, dialect_text: true }\n`,
      ['silence', 'dtmf 1'],
    );
    expect([out[0], out[2], out[3]]).toEqual(['< Drücked Sie d Eis für d Rächnig.', '< Drücked Sie d Eis für d Rächnig.', '< Rächnig.']);
    // The built-in "Entschuldigung, ich habe nichts gehört." is Standard German, rendered.
    const sorry = new SwissGermanRenderer().render('Entschuldigung, ich habe nichts gehört.', 'zurich');
    expect(out[1]).toBe(`< ${sorry}`);
    expect(sorry).not.toBe('Entschuldigung, ich habe nichts gehört.');
  });

  const problem = (text: string): string => {
    try {
      checkDialplan('t.yaml', text);
    } catch (error) {
      if (error instanceof DialplanError) return error.message;
      throw error;
    }
    throw new Error('no problem found');
  };
  const route = (language: string, extra: string, say: string) =>
    `name: t\nroutes:\n  - number: "1"\n    language: ${language}\n    voice: anna\n${extra}    steps:\n      - say: ${say}\n`;

  it('is refused outside Swiss German dialects, at its line and column', () => {
    expect(problem(route('en', '', '{ text: Hello, dialect_text: true }'))).toBe(
      't.yaml:7:43: dialect_text is for text written in a Swiss German dialect (de-CH), not en',
    );
    expect(problem(route('de-CH', '    dialect: hochdeutsch\n', '{ text: Grüezi, dialect_text: true }'))).toMatch(
      /^t\.yaml:8:44: .*hochdeutsch is read as written/,
    );
    expect(problem(route('en', '    dialect_text: true\n', '{ text: Hello }'))).toBe(
      't.yaml:6:19: dialect_text is for text written in a Swiss German dialect (de-CH), not en',
    );
    expect(() => checkDialplan('t.yaml', route('de-CH', '    dialect: bern\n    dialect_text: true\n', `"${BERNESE}"`))).toThrow(/say/);
    expect(checkDialplan('t.yaml', route('de-CH', '    dialect: bern\n    dialect_text: true\n', `{ text: "${BERNESE}" }`)).routes[0]!.dialect_text).toBe(true);
  });
});
