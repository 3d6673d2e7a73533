/** Dialplans are checked at start, and every problem names its file, line and column. */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DialplanError, loadDialplans, parseDialplan, stepKind } from '../../src/dialplan/dialplan-loader.js';

const SHIPPED = fileURLToPath(new URL('../../dialplans', import.meta.url));

const plan = (steps: string, extra = '') => `name: t\nroutes:\n  - number: "100"\n    language: en\n    voice: anna\n${extra}    steps:\n${steps}`;

function problem(text: string): DialplanError {
  try {
    parseDialplan('t.yaml', text);
  } catch (error) {
    if (error instanceof DialplanError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('dialplan loader', () => {
  it('loads the shipped echo dialplan: answer, greet, listen, repeat, jump back', async () => {
    const plans = await loadDialplans(SHIPPED);
    const route = plans.route('0441234567');
    expect(route?.file).toMatch(/echo\.yaml$/);
    expect(route?.steps.map(stepKind)).toEqual(['answer', 'say', 'listen', 'say', 'goto']);
  });

  it('routes an exact number first, then the longest prefix, then *', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dialplans-'));
    const route = (number: string) => `  - number: "${number}"\n    language: en\n    voice: anna\n    steps:\n      - hangup: {}\n`;
    await fs.writeFile(path.join(dir, 'a.yaml'), `name: a\nroutes:\n${route('*')}${route('044*')}`);
    await fs.writeFile(path.join(dir, 'b.yml'), `name: b\nroutes:\n${route('0441*')}${route('0441234567')}`);
    const plans = await loadDialplans(dir);
    expect(plans.route('0441234567')?.number).toBe('0441234567');
    expect(plans.route('0441999')?.number).toBe('0441*');
    expect(plans.route('0449')?.number).toBe('044*');
    expect(plans.route('031')?.number).toBe('*');
    await fs.writeFile(path.join(dir, 'c.yaml'), `name: c\nroutes:\n${route('044*')}`);
    await expect(loadDialplans(dir)).rejects.toThrow(/c\.yaml:0:0: the number 044\* is routed twice \(also in .*a\.yaml\)/);
    await fs.rm(dir, { recursive: true });
  });

  it('takes the routes naming the trunk a call came from before the general ones, and ignores those of other trunks', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dialplans-'));
    const route = (number: string, trunk?: string) =>
      `  - number: "${number}"\n${trunk ? `    trunk: ${trunk}\n` : ''}    language: en\n    voice: anna\n    steps:\n      - hangup: {}\n`;
    await fs.writeFile(path.join(dir, 'a.yaml'), `name: a\nroutes:\n${route('*')}${route('044*')}${route('0441234567')}`);
    await fs.writeFile(path.join(dir, 'b.yaml'), `name: b\nroutes:\n${route('0441234567', 'carrier')}${route('044*', 'pbx')}${route('*', 'pbx')}`);
    const plans = await loadDialplans(dir);
    const chosen = (number: string, trunk: string | null) => {
      const found = plans.route(number, trunk);
      return found ? `${found.number}${found.trunk ? `@${found.trunk}` : ''}` : null;
    };
    expect(chosen('0441234567', null)).toBe('0441234567');
    expect(chosen('0441234567', 'carrier')).toBe('0441234567@carrier');
    // An exact number for any trunk goes before a prefix for this trunk.
    expect(chosen('0441234567', 'pbx')).toBe('0441234567');
    expect(chosen('0449', 'pbx')).toBe('044*@pbx');
    expect(chosen('0449', 'carrier')).toBe('044*');
    expect(chosen('031', 'pbx')).toBe('*@pbx');
    expect(chosen('031', 'other')).toBe('*');
    // The same number may have a route for each trunk, but not two for one.
    await fs.writeFile(path.join(dir, 'c.yaml'), `name: c\nroutes:\n${route('044*', 'pbx')}`);
    await expect(loadDialplans(dir)).rejects.toThrow(/c\.yaml:0:0: the number 044\* \(trunk pbx\) is routed twice \(also in .*b\.yaml\)/);
    await fs.rm(dir, { recursive: true });
  });

  const cases: Array<[string, string, RegExp, number]> = [
    ['broken YAML', 'name: t\nroutes: [\n', /t\.yaml:\d+:\d+: /, 0],
    ['a list instead of a mapping', '- a\n- b\n', /a mapping with name and routes/, 1],
    ['a missing voice', 'name: t\nroutes:\n  - number: "1"\n    language: en\n    steps:\n      - hangup: {}\n', /must have required property 'voice'/, 3],
    ['an unknown voice', plan('      - hangup: {}\n').replace('voice: anna', 'voice: nobody'), /unknown voice "nobody"/, 5],
    [
      'a transfer through a trunk by REFER',
      plan('      - transfer: { to: "1", trunk: carrier, mode: refer }\n'),
      /a transfer through a trunk is a bridged call/,
      7,
    ],
    ['an unknown language', plan('      - hangup: {}\n').replace('language: en', 'language: xx'), /unknown language "xx"/, 4],
    ['a bad number', plan('      - hangup: {}\n').replace('"100"', '"1 00"'), /number must match pattern/, 3],
    ['an unknown field in a step', plan('      - say:\n          text: hi\n          colour: red\n'), /unknown field "colour"/, 9],
    ['a step of two kinds', plan('      - answer: {}\n        hangup: {}\n'), /exactly one of/, 7],
    ['a step of no kind', plan('      - wait: 5\n'), /exactly one of/, 7],
    ['a timeout out of range', plan('      - listen:\n          timeout_ms: 10\n'), /timeout_ms must be >= 500/, 8],
    ['a goto to nowhere', plan('      - goto: nowhere\n'), /goto names no step: "nowhere"/, 7],
    ['a duplicate step id', plan('      - id: a\n        answer: {}\n      - id: a\n        hangup: {}\n'), /step id "a" is used twice/, 9],
    ['an unknown voice in a say step', plan('      - say:\n          text: hi\n          voice: nobody\n'), /unknown voice "nobody"/, 9],
    ['an empty step list', plan('').replace('    steps:\n', '    steps: []\n'), /steps must NOT have fewer than 1 items/, 6],
    ['an account name that is none', plan('      - hangup: {}\n').replace('name: t\n', 'name: t\naccount: Big Co\n'), /account must match pattern/, 2],
  ];
  it("gives every route the file's account", () => {
    const routes = parseDialplan('t.yaml', plan('      - hangup: {}\n').replace('name: t\n', 'name: t\naccount: zurich-utility\n'));
    expect(routes[0]!.account).toBe('zurich-utility');
    expect(parseDialplan('t.yaml', plan('      - hangup: {}\n'))[0]!.account).toBeUndefined();
  });
  for (const [name, text, message, line] of cases) {
    it(`stops at ${name}, naming the file and line`, () => {
      const error = problem(text);
      expect(error.message).toMatch(message);
      if (line > 0) expect(error.line).toBe(line);
      expect(error.message.startsWith(`t.yaml:${error.line}:${error.column}: `)).toBe(true);
    });
  }

  it('names the folder when it cannot be read', async () => {
    await expect(loadDialplans('/nonexistent/dialplans')).rejects.toThrow(/\/nonexistent\/dialplans:0:0: the dialplan folder cannot be read/);
  });
});
