/**
 * The dialplan steps, run through a simulated call: the caller is a list of lines (`dtmf 12#`,
 * `silence`, `hangup`, or what they say) and every prompt, transfer, recording and hangup comes
 * out as a line, as `sprachrohr dialplan simulate` prints them.
 */
import { describe, expect, it } from 'vitest';
import { simulateRoute } from '../helpers/simulate-route.js';

const simulate = simulateRoute;

const MENU = `      - id: menu
        menu:
          prompt: Press 1 for sales or 2 for support.
          options:
            - { key: "1", words: [sales, buy], goto: sales }
            - { key: "2", words: { en: [support, help], de: [Hilfe] }, goto: support }
          fallback: operator
      - id: sales
        say: { text: "Sales, you chose {{choice}}." }
      - hangup: {}
      - id: support
        say: { text: Support. }
      - hangup: { reason: support done }
      - id: operator
        say: { text: Operator. }
`;

describe('menu', () => {
  it('takes a key', async () => {
    const { out } = await simulate(MENU, ['dtmf 1']);
    expect(out).toEqual(['< Press one for sales or two for support.', '< Sales, you chose one.', '-> hangup']);
  });

  it('takes a spoken word: case, accents and longer compounds do not matter', async () => {
    expect((await simulate(MENU, ['I need HELP please'])).out.slice(1)).toEqual(['< Support.', '-> hangup (support done)']);
    expect((await simulate(MENU, ['supportive words'])).out[1]).toBe('< Support.');
    expect((await simulate(MENU, ['I want to buy'])).out[1]).toBe('< Sales, you chose one.');
  });

  it('says sorry on no input and no match, tries again, and falls back after the last retry', async () => {
    const { out } = await simulate(MENU, ['silence', 'dtmf 7', 'what?']);
    expect(out).toEqual([
      '< Press one for sales or two for support.',
      '< Sorry, I did not hear anything.',
      '< Press one for sales or two for support.',
      '< Sorry, I did not get that.',
      '< Press one for sales or two for support.',
      '< Operator.',
      '-> hangup',
    ]);
  });

  it('ends when the caller hangs up in the menu, without a hangup of ours', async () => {
    const { out, end } = await simulate(MENU, ['hangup']);
    expect(out).toEqual(['< Press one for sales or two for support.']);
    expect(end).toBe('caller-left');
  });
});

describe('gather', () => {
  const GATHER = `      - gather:
          prompt: Your customer number, then hash.
          into: customer
          min_digits: 4
          max_digits: 8
          pattern: "^[1-9][0-9]*$"
          retries: 1
          no_match: That number is not valid.
          fallback: nobody
      - say: { text: "Number {{customer}}." }
      - hangup: {}
      - id: nobody
        say: { text: "No number ({{customer}})." }
`;

  it('takes keys up to the finishing key, which is not part of the entry', async () => {
    const { out, vars } = await simulate(GATHER, ['dtmf 12345#']);
    expect(out.slice(1)).toEqual(['< Number twelve thousand three hundred and forty-five.', '-> hangup']);
    expect(vars['customer']).toBe('12345');
  });

  it('refuses entries too short or off the pattern, and falls back with an empty entry', async () => {
    const { out, vars } = await simulate(GATHER, ['dtmf 12#', 'dtmf 0123#']);
    expect(out).toEqual([
      '< Your customer number, then hash.',
      '< That number is not valid.',
      '< Your customer number, then hash.',
      '< No number ().',
      '-> hangup',
    ]);
    expect(vars['customer']).toBe('');
  });

  it('ends an entry at max_digits, and a pause ends a shorter one', async () => {
    expect((await simulate(GATHER, ['dtmf 123456789'])).vars['customer']).toBe('12345678');
    expect((await simulate(GATHER, ['dtmf 98765'])).vars['customer']).toBe('98765');
  });

  it('keeps keys typed ahead for the next step', async () => {
    const steps = `      - menu:
          prompt: Menu.
          options: [{ key: "1", goto: entry }]
      - id: entry
        gather: { into: pin, max_digits: 4 }
      - say: { text: "{{choice}} then {{pin}}" }
`;
    const { out } = await simulate(steps, ['dtmf 11234']);
    expect(out).toEqual(['< Menu.', '< one then one thousand two hundred and thirty-four', '-> hangup']);
  });
});

describe('set, branch, language, say repeat', () => {
  it('branches on variables with equals, contains, matches, in, empty and not', async () => {
    const steps = `      - set: { tier: gold, note: "caller {{caller}}" }
      - branch:
          - if: { tier: silver }
            goto: wrong
          - if: { tier: { in: [gold, platinum] }, note: { contains: caller }, caller: { matches: "^sip:\\\\+4179" }, heard: { empty: true }, called: { not: "999" } }
            goto: right
      - id: wrong
        say: { text: Wrong. }
      - hangup: {}
      - id: right
        say: { text: "Right, {{tier}}." }
`;
    expect((await simulate(steps, [])).out).toEqual(['< Right, gold.', '-> hangup']);
  });

  it('goes on in another language and voice after a language step', async () => {
    const steps = `      - language: { language: fr-CH, voice: lea }
      - say: { text: "Bonjour, nous sommes le 1er août, langue {{language}}." }
      - language: { language: de-CH, dialect: bern }
      - say: { text: Wir haben heute geschlossen. }
`;
    const { out } = await simulate(steps, []);
    expect(out[0]).toBe('< Bonjour, nous sommes le premier août, langue fr-CH.');
    expect(out[1]).not.toBe('< Wir haben heute geschlossen.');
    expect(out[1]).toMatch(/^< \S/);
  });

  it('says a prompt as often as repeat says', async () => {
    const { out } = await simulate('      - say: { text: Hello., repeat: 3, pause_ms: 0 }\n', []);
    expect(out).toEqual(['< Hello.', '< Hello.', '< Hello.', '-> hangup']);
  });
});

describe('transfer and record', () => {
  const STEPS = `      - transfer:
          to: "sip:{{team}}@pbx.example.ch"
          on_fail: failed
      - id: failed
        say: { text: "Transfer {{transfer}} {{transfer_status}}." }
      - record: {}
      - say: { text: "Message {{recording}}." }
`;
  const route = '    max_turns: 3\n';

  it('hands the call over, and the dialplan ends there', async () => {
    const { out, end } = await simulate(`      - set: { team: sales }\n${STEPS}`, [], { route });
    expect(out).toEqual(['-> transfer sip:sales@pbx.example.ch']);
    expect(end).toBe('ended');
  });

  it('shows a transfer through a trunk, a bridged call', async () => {
    const steps =
      '      - transfer: { to: "0791234567", trunk: carrier, on_fail: failed }\n      - id: failed\n        say: { text: "Transfer {{transfer}}." }\n';
    expect((await simulate(steps, [], { route })).out).toEqual(['-> transfer 0791234567 through the trunk carrier']);
    expect((await simulate(steps, [], { target: 'busy', route })).out).toEqual([
      '-> transfer 0791234567 through the trunk carrier',
      '< Transfer busy.',
      '-> hangup',
    ]);
  });

  it('goes on with on_fail when the target is busy, and records a message', async () => {
    const { out } = await simulate(`      - set: { team: sales }\n${STEPS}`, ['Please call me back.'], { target: 'busy', route });
    expect(out).toEqual([
      '-> transfer sip:sales@pbx.example.ch',
      '< Transfer busy four hundred and eighty-six.',
      '-> record',
      '< Message simulated-one.',
      '-> hangup',
    ]);
  });
});

describe('turn limit', () => {
  it('ends a call that is sent back more than max_turns times', async () => {
    const steps = '      - id: again\n        listen: { timeout_ms: 500 }\n      - goto: again\n';
    const { end } = await simulate(steps, ['silence', 'silence', 'silence', 'silence'], { route: '    max_turns: 2\n' });
    expect(end).toBe('max-turns');
  });
});
