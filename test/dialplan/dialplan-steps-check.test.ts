/**
 * Every new step's wrong fields, targets that name no step, loops in which nothing listens, and
 * steps nothing reaches: each found at load with its file, line and column.
 */
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkDialplan, DialplanError, loadDialplans } from '../../src/dialplan/dialplan-loader.js';

const plan = (steps: string) => `name: t\nroutes:\n  - number: "100"\n    language: de-CH\n    voice: anna\n    steps:\n      - answer: {}\n${steps}`;

function problem(text: string): DialplanError {
  try {
    checkDialplan('t.yaml', text);
  } catch (error) {
    if (error instanceof DialplanError) return error;
    throw error;
  }
  throw new Error('accepted');
}

const MENU_OK = '      - id: m\n        menu:\n          prompt: Eins oder zwei?\n          options:\n';

describe('dialplan steps are checked at load', () => {
  const cases: Array<[string, string, RegExp, number]> = [
    ['a menu without options', plan('      - menu: { prompt: Hallo }\n'), /must have required property 'options'/, 8],
    ['a menu option naming no step', plan(`${MENU_OK}            - { key: "1", goto: nowhere }\n`), /goto names no step: "nowhere"/, 12],
    ['a menu option without key or words', plan(`${MENU_OK}            - { goto: m }\n`), /an option needs a key, words or both/, 12],
    ['a menu key that is not a key', plan(`${MENU_OK}            - { key: "12", goto: m }\n`), /key must match pattern/, 12],
    [
      'a key that chooses two options',
      plan(`${MENU_OK}            - { key: "1", goto: m }\n            - { key: "1", goto: m }\n`),
      /key 1 chooses two options/,
      13,
    ],
    ['words for an unknown language', plan(`${MENU_OK}            - { words: { xx: [a] }, goto: m }\n`), /unknown language "xx"/, 12],
    ['a menu fallback naming no step', plan(`${MENU_OK}            - { key: "1", goto: m }\n          fallback: gone\n`), /fallback names no step: "gone"/, 13],
    ['a gather pattern that is not a regular expression', plan('      - gather: { pattern: "([0-9" }\n'), /not a regular expression/, 8],
    ['a gather with min_digits above max_digits', plan('      - gather: { min_digits: 9, max_digits: 4 }\n'), /min_digits is more than max_digits/, 8],
    ['a gather finishing key of two keys', plan('      - gather: { finish_on_key: "##" }\n'), /finish_on_key must match pattern/, 8],
    ['a set with a bad variable name', plan('      - set: { "Bad-Name": x }\n'), /unknown field "Bad-Name"/, 8],
    ['a branch case naming no step', plan('      - branch:\n          - if: { digits: "1" }\n            goto: gone\n'), /goto names no step: "gone"/, 10],
    [
      'a branch test of an unknown kind',
      plan('      - branch:\n          - if: { digits: { like: "1" } }\n            goto: x\n      - id: x\n        hangup: {}\n'),
      /unknown field "like"/,
      9,
    ],
    [
      'a branch regular expression that does not compile',
      plan('      - branch:\n          - if: { caller: { matches: "[" } }\n            goto: x\n      - id: x\n        hangup: {}\n'),
      /not a regular expression/,
      9,
    ],
    ['opening hours of a bad shape', plan('      - hours: { weekly: { mon: ["8-17"] } }\n'), /must match pattern/, 8],
    ['opening hours naming no step', plan('      - hours: { weekly: { mon: ["08:00-17:00"] }, closed: gone }\n'), /closed names no step: "gone"/, 8],
    ['an unknown canton', plan('      - hours: { weekly: { mon: ["08:00-17:00"] }, canton: XX }\n'), /canton/, 8],
    ['a language step with an unknown language', plan('      - language: { language: xx }\n'), /unknown language "xx"/, 8],
    ['a dialect the language does not have', plan('      - language: { language: fr-CH, dialect: zurich }\n'), /fr-CH has no dialect "zurich"/, 8],
    ['a say dialect the call language does not have', plan('      - say: { text: Hallo, dialect: geneve }\n'), /de-CH has no dialect "geneve"/, 8],
    ['a transfer to something that is no target', plan('      - transfer: { to: "not a uri" }\n'), /to must match pattern/, 8],
    ['a transfer mode that does not exist', plan('      - transfer: { to: "+41441234567", mode: blind }\n'), /mode must be one of auto, refer, bridge/, 8],
    ['a transfer header that is not X-', plan('      - transfer: { to: "+41441234567", headers: { From: x } }\n'), /unknown field "From"/, 8],
    ['a transfer on_fail naming no step', plan('      - transfer: { to: "+41441234567", on_fail: gone }\n'), /on_fail names no step: "gone"/, 8],
    [
      'a webhook method that is not POST or PUT',
      plan('      - webhook: { url: "https://bot.example/turn", method: GET }\n'),
      /method must be one of POST, PUT/,
      8,
    ],
    [
      'a webhook method in lower case',
      plan('      - webhook:\n          url: "https://bot.example/turn"\n          method: put\n'),
      /method must be one of POST, PUT/,
      10,
    ],
    ['a stream to an http address', plan('      - stream: { url: "http://bot.example/ws" }\n'), /url must match pattern/, 8],
    ['a stream mode that does not exist', plan('      - stream: { url: "wss://bot.example/ws", mode: video }\n'), /mode must be one of media, text/, 8],
    ['a stream parameter of a bad name', plan('      - stream: { url: "wss://bot.example/ws", parameters: { "a b": x } }\n'), /unknown field "a b"/, 8],
    ['a stream on_fail naming no step', plan('      - stream: { url: "wss://bot.example/ws", on_fail: gone }\n'), /on_fail names no step: "gone"/, 8],
    [
      'a stream connect timeout out of range',
      plan('      - stream: { url: "wss://bot.example/ws", connect_timeout_ms: 10 }\n'),
      /connect_timeout_ms must be >= 100/,
      8,
    ],
    ['a record limit out of range', plan('      - record: { max_seconds: 3600 }\n'), /max_seconds must be <= 600/, 8],
    ['a hangup with an unknown field', plan('      - hangup: { cause: 16 }\n'), /unknown field "cause"/, 8],
    ['say repeat out of range', plan('      - say: { text: Hallo, repeat: 0 }\n'), /repeat must be >= 1/, 8],
    [
      'a loop in which nothing listens',
      plan('      - id: again\n        say: { text: Hallo }\n      - goto: again\n'),
      /closes a loop in which no step listens/,
      10,
    ],
    [
      'a loop through a branch in which nothing listens',
      plan('      - id: top\n        set: { a: "1" }\n      - branch:\n          - if: { a: "1" }\n            goto: top\n'),
      /closes a loop in which no step listens/,
      10,
    ],
  ];
  for (const [name, text, message, line] of cases) {
    it(`stops at ${name}, naming the line`, () => {
      const error = problem(text);
      expect(error.message).toMatch(message);
      expect(error.line).toBe(line);
      expect(error.message.startsWith(`t.yaml:${error.line}:${error.column}: `)).toBe(true);
    });
  }

  it('accepts a loop back to a stream bot (it waits for the caller), with parameters and headers', () => {
    const { routes, warnings } = checkDialplan(
      't.yaml',
      plan(
        '      - id: bot\n        stream:\n          url: "wss://bot.example/ws?x=1"\n          mode: text\n          parameters: { caller: "{{caller}}" }\n' +
          '          headers: { X-Token: abc }\n          on_fail: bot\n      - goto: bot\n',
      ),
    );
    expect(routes).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('accepts a loop that listens, and warns of steps nothing reaches', () => {
    const { routes, warnings } = checkDialplan('t.yaml', plan('      - id: again\n        listen: {}\n      - goto: again\n      - say: { text: Nie }\n'));
    expect(routes).toHaveLength(1);
    expect(warnings.map((warning) => warning.message)).toEqual(['t.yaml:11:9: warning: step 4 is never reached']);
  });

  it('loads the shipped dialplans: echo, the Zürich hotline, the four-language welcome and the webhook and stream bots, without warnings', async () => {
    const plans = await loadDialplans(fileURLToPath(new URL('../../dialplans', import.meta.url)));
    expect(plans.warnings).toEqual([]);
    expect(plans.route('0445550100')?.file).toMatch(/hotline-zurich\.yaml$/);
    expect(plans.route('0445550200')?.file).toMatch(/welcome-4-languages\.yaml$/);
    expect(plans.route('0311234567')?.file).toMatch(/echo\.yaml$/);
    const names = await fs.readdir(fileURLToPath(new URL('../../dialplans', import.meta.url)));
    expect(names.sort()).toEqual(['bot-stream.yaml', 'bot-webhook.yaml', 'echo.yaml', 'hotline-zurich.yaml', 'welcome-4-languages.yaml']);
    expect(plans.route('0445550300')?.file).toMatch(/bot-webhook\.yaml$/);
    expect(plans.route('0445550401')?.file).toMatch(/bot-stream\.yaml$/);
  });
});
