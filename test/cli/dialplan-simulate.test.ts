/**
 * `sprachrohr dialplan simulate`: the shipped dialplans run in the terminal against a caller
 * typed on standard input, and print each prompt as spoken, each transfer, recording and
 * hangup; bad arguments and bad files are refused with their reason. The command runs in this
 * process (`runCliInProcess`: the dispatch, output and exit status of the installed command,
 * the caller's lines on a stream of its own) except in the first case, which runs the built
 * command with the lines piped to its real standard input.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { spokenText } from '../../src/dialplan/simulation/spoken-text.js';
import { runCli, runCliInProcess } from '../helpers/cli.js';

/**
 * A prompt of the shipped dialplans as the simulator prints it: the dialplan's German text
 * rendered into Zürich German by the renderer as it is now. What these tests hold is the call's
 * flow (which prompt, in which order, where it goes); the renderings themselves are measured
 * by the dialect tests and benchmarks, and change as the dialect data grows.
 */
const zurich = (text: string): string =>
  `< ${spokenText({ text, language: 'de-CH', voice: 'anna', dialect: 'zurich', bargeIn: true }, new SwissGermanRenderer())}`;

const WELCOME = fileURLToPath(new URL('../../dialplans/welcome-4-languages.yaml', import.meta.url));
const HOTLINE = fileURLToPath(new URL('../../dialplans/hotline-zurich.yaml', import.meta.url));

const simulate = (file: string, args: string[], input: string[], run = runCliInProcess) =>
  run(['dialplan', 'simulate', file, ...args], {}, input.map((line) => `${line}\n`).join(''));
// The welcome line's choice: German with a dialect-free route voice (standard Swiss data), then French, Italian and English.
const CHOICE = `< ${spokenText(
  {
    text: `<speak>Willkommen. Für Deutsch drücken Sie 1. <lang xml:lang="fr-CH">Pour le français, tapez 2.</lang> <lang xml:lang="it-CH">Per l'italiano, premete 3.</lang> <lang xml:lang="en">For English, press 4.</lang></speak>`,
    language: 'de-CH',
    voice: 'anna',
    bargeIn: true,
  },
  new SwissGermanRenderer(),
)}`;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-simulate-'));
});
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

describe('sprachrohr dialplan simulate: welcome-4-languages', () => {
  it('chooses Italian by key and is transferred, busy target: says sorry in Italian', async () => {
    const result = await simulate(WELCOME, ['--number', '0445550200', '--transfer', 'busy'], ['dtmf 3', 'dtmf 0'], runCli);
    expect(result.stdout.trim().split('\n')).toEqual([
      CHOICE,
      '< Per informazioni premete uno. Per la centrale premete zero.',
      '-> transfer +41445550200',
      '< Al momento nessuno è disponibile. Vi preghiamo di richiamare più tardi.',
      '-> hangup (nobody free)',
    ]);
    expect(result.code).toBe(0);
  });

  it('chooses English and the switchboard by word', async () => {
    const result = await simulate(WELCOME, ['--number', '0445550200'], ['Englisch bitte', 'the switchboard please']);
    expect(result.stdout.trim().split('\n')).toEqual([CHOICE, '< For information, press one. For the switchboard, press zero.', '-> transfer +41445550200']);
    expect(result.code).toBe(0);
  });

  it('chooses French and hears the opening hours, then the call is hung up', async () => {
    const result = await simulate(WELCOME, ['--number', '0445550200'], ['dtmf 21']);
    expect(result.stdout.trim().split('\n')).toEqual([
      CHOICE,
      '< Pour des renseignements, tapez un. Pour la centrale, tapez zéro.',
      '< Nos guichets sont ouverts du lundi au vendredi de huit heures à dix-sept heures. Au revoir.',
      '-> hangup',
    ]);
  });

  it('ends quietly when the caller hangs up', async () => {
    const result = await simulate(WELCOME, ['--number', '0445550200'], ['hangup']);
    expect(result.stdout.trim().split('\n')).toEqual([CHOICE]);
    expect(result.code).toBe(0);
  });
});

describe('sprachrohr dialplan simulate: bad input', () => {
  it('refuses a bad --at, --transfer, a missing file argument, with usage help', async () => {
    const at = await simulate(WELCOME, ['--at', 'tomorrow'], []);
    expect(at.code).toBe(2);
    expect(at.stderr).toContain('--at takes an ISO date and time');
    const transfer = await simulate(WELCOME, ['--transfer', 'maybe'], []);
    expect(transfer.code).toBe(2);
    expect(transfer.stderr).toContain('--transfer must be one of answer, busy, no-answer, refuse');
    expect((await runCliInProcess(['dialplan', 'simulate'])).code).toBe(2);
  });

  it('names the problem of a bad file, a number no route takes, and a file that cannot be read', async () => {
    const bad = path.join(dir, 'bad.yaml');
    await fs.writeFile(bad, 'name: b\nroutes:\n  - number: "1"\n    language: en\n    voice: anna\n    steps:\n      - goto: nowhere\n');
    const broken = await simulate(bad, [], []);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`${bad}:7:15: goto names no step: "nowhere"`);
    const unrouted = await simulate(WELCOME, ['--number', '999'], []);
    expect(unrouted.code).toBe(1);
    expect(unrouted.stderr).toContain('no route of');
    const missing = await simulate(path.join(dir, 'missing.yaml'), [], []);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot be read: ENOENT/);
  });

  it('fails a call that passes max_turns, and warns of an unknown dtmf line without ending the call', async () => {
    const loop = path.join(dir, 'loop.yaml');
    await fs.writeFile(
      loop,
      'name: l\nroutes:\n  - number: "*"\n    language: en\n    voice: anna\n    max_turns: 1\n    steps:\n      - id: again\n        listen: {}\n      - goto: again\n',
    );
    const result = await simulate(loop, [], ['dtmf x', 'silence', 'silence']);
    expect(result.stdout).toContain('! "dtmf x" is not a key press');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('more than max_turns (1)');
  });
});

describe('sprachrohr dialplan simulate: hotline-zurich', () => {
  const GREETING = zurich('Guten Tag, Sie sind bei der Hotline der Stadtwerke.');
  const MENU = zurich(
    'Bei einer Störung drücken Sie die Taste 1, für Fragen zur Rechnung die Taste 2, für unsere Öffnungszeiten die Taste 3. Wenn Sie mit einem Mitarbeiter sprechen möchten, drücken Sie die Taste 0 oder sagen Sie Mitarbeiter.',
  );
  const CLOSED = zurich(
    'Unsere Hotline ist von Montag bis Freitag von 8 Uhr bis 17:30 Uhr erreichbar. Bei einer Störung erreichen Sie den Pikettdienst unter 044 555 01 11.',
  );
  const HOLIDAY = zurich('Heute ist ein Feiertag, unsere Hotline ist geschlossen. Bei einer Störung erreichen Sie den Pikettdienst unter 044 555 01 11.');
  const MESSAGE = zurich('Sie können uns nach dem Signalton eine Nachricht hinterlassen.');
  const run = (at: string, input: string[], extra: string[] = []) => simulate(HOTLINE, ['--number', '0445550100', '--at', at, ...extra], input);

  it('open on a Wednesday morning: the menu in Zürich German, the hours by key, a person by word', async () => {
    const result = await run('2026-11-25T10:00:00+01:00', ['dtmf 3', 'Ich möchte einen Mitarbeiter']);
    expect(result.stdout.trim().split('\n')).toEqual([
      GREETING,
      MENU,
      zurich('Wir sind von Montag bis Freitag von 8 Uhr bis 17:30 Uhr für Sie da.'),
      MENU,
      zurich('Einen Moment bitte, Sie werden verbunden.'),
      '-> transfer +41445550110',
    ]);
    expect(result.code).toBe(0);
  });

  it('takes the customer number with a header for the billing team; a team that does not answer leads to voicemail', async () => {
    const result = await run(
      '2026-11-25T10:00:00+01:00',
      ['dtmf 2', 'dtmf 1234#', 'dtmf 12345678#', 'Bitte rufen Sie mich zurück.'],
      ['--transfer', 'no-answer'],
    );
    expect(result.stdout.trim().split('\n')).toEqual([
      GREETING,
      MENU,
      zurich('Bitte geben Sie Ihre achtstellige Kundennummer ein und drücken Sie danach die Raute.'),
      zurich('Diese Kundennummer ist nicht gültig.'),
      zurich('Bitte geben Sie Ihre achtstellige Kundennummer ein und drücken Sie danach die Raute.'),
      zurich('Sie werden mit der Abteilung Rechnungen verbunden.'),
      '-> transfer +41445550112',
      zurich('Im Moment sind leider alle Leitungen besetzt. Sie können uns nach dem Signalton eine Nachricht hinterlassen.'),
      '-> record',
      zurich('Vielen Dank für Ihre Nachricht. Wir melden uns so bald wie möglich.'),
      zurich('Auf Wiederhören.'),
      '-> hangup (hotline done)',
    ]);
    expect(result.code).toBe(0);
  });

  it('closed in the evening: the hours, then a voicemail; silence leaves no message', async () => {
    const result = await run('2026-11-25T20:00:00+01:00', ['silence']);
    expect(result.stdout.trim().split('\n')).toEqual([CLOSED, MESSAGE, '-> record', zurich('Auf Wiederhören.'), '-> hangup (hotline done)']);
  });

  // Each instant with the greeting (open) or the closed notice it must get, across 2026 and 2027.
  const instants: Array<[string, string, string]> = [
    ['summer time has begun: Monday 08:30 local (06:30 UTC)', '2026-03-30T06:30:00Z', GREETING],
    ['winter time the Friday before: 07:30 local (06:30 UTC)', '2026-03-27T06:30:00Z', CLOSED],
    ['winter time again: Monday 07:30 local (06:30 UTC)', '2026-10-26T06:30:00Z', CLOSED],
    ['winter time again: Monday 08:30 local (07:30 UTC)', '2026-10-26T07:30:00Z', GREETING],
    ['17:29 on a Friday', '2026-11-27T17:29:00+01:00', GREETING],
    ['17:30 on a Friday', '2026-11-27T17:30:00+01:00', CLOSED],
    ['a Saturday morning', '2026-11-28T10:00:00+01:00', CLOSED],
    ['Sechseläuten morning', '2026-04-20T10:00:00+02:00', GREETING],
    ['Sechseläuten afternoon', '2026-04-20T14:00:00+02:00', CLOSED],
    ['Karfreitag 2026', '2026-04-03T10:00:00+02:00', HOLIDAY],
    ['Tag der Arbeit 2026', '2026-05-01T10:00:00+02:00', HOLIDAY],
    ['Stephanstag 2026 (a Saturday: closed as a weekend would be, but a holiday first)', '2026-12-26T10:00:00+01:00', HOLIDAY],
    ['Berchtoldstag 2027 (a Saturday)', '2027-01-02T10:00:00+01:00', HOLIDAY],
    ['Ostermontag 2027', '2027-03-29T10:00:00+02:00', HOLIDAY],
    ['Auffahrt 2027', '2027-05-06T10:00:00+02:00', HOLIDAY],
    ['Pfingstmontag 2027', '2027-05-17T10:00:00+02:00', HOLIDAY],
    ['the day after Pfingstmontag 2027', '2027-05-18T10:00:00+02:00', GREETING],
    ['Bundesfeiertag 2027 (a Sunday)', '2027-08-01T10:00:00+02:00', HOLIDAY],
  ];
  for (const [name, at, first] of instants) {
    it(`${name}: ${first === GREETING ? 'open' : first === HOLIDAY ? 'holiday' : 'closed'}`, async () => {
      const result = await run(at, ['hangup']);
      expect(result.stdout.split('\n')[0]).toBe(first);
    });
  }
});
