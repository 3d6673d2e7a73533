/**
 * The deployment lexicon and Swiss German rendering on the command line: `serve` refuses a bad
 * lexicon at start with its FILE:LINE:COLUMN (exit 78), and a lexicon file named where it would
 * be read as a dialplan; `dialplan check` checks it; `dialect` renders standard input line by
 * line as it arrives, with the lexicon, and explains where each word comes from; `dialplan
 * simulate` speaks with the lexicon beside the file.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { runCommand } from '../../src/cli/run-command.js';
import { checkLexicon } from '../../src/speech/lexicon-loader.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';
import { runCliInProcess } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lexicon-cli-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true });
});

describe('serve with a lexicon', () => {
  it('stops at start on a bad lexicon beside the dialplans, naming its line and column (exit 78)', async () => {
    const dialplans = path.join(dir, 'bad-dialplans');
    await fs.mkdir(dialplans);
    await fs.writeFile(path.join(dialplans, 'lexicon.yaml'), 'entries:\n  - german: Stadtwerke\n    regions: { zueri: Stadtwärch }\n');
    const result = await runCliInProcess(['serve'], { SPRACHROHR_DIALPLANS_DIR: dialplans, SPRACHROHR_DATA_DIR: path.join(dir, 'data') });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(`${path.join(dialplans, 'lexicon.yaml')}:3:23: de-CH has no dialect "zueri"`);
  });

  it('refuses SPRACHROHR_LEXICON_FILE naming a file in the dialplan folder that would be read as a dialplan', async () => {
    const result = await runCliInProcess(['serve'], { SPRACHROHR_DIALPLANS_DIR: dir, SPRACHROHR_LEXICON_FILE: path.join(dir, 'words.yaml') });
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/SPRACHROHR_LEXICON_FILE: .*words\.yaml is in the dialplan folder/);
  });
});

describe('dialplan check with a lexicon', () => {
  it('checks lexicon.yaml and the file SPRACHROHR_LEXICON_FILE names as lexicons', async () => {
    const good = path.join(dir, 'lexicon.yaml');
    await fs.writeFile(good, 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n  - german: Dübendorf\n    pronunciation: { ipa: "ˈdyːbəndɔrf" }\n');
    const named = path.join(dir, 'names.yml');
    await fs.writeFile(named, 'entries:\n  - german: Uster\n    pronunciation: { espeak: "u:st@r" }\n');
    const result = await runCliInProcess(['dialplan', 'check', good, named], { SPRACHROHR_LEXICON_FILE: named });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`${good}: ok (2 entries)\n`);
    expect(result.stderr).toContain(`${named}:3:30: pronunciation takes ipa only`);
  });
});

describe('sprachrohr dialect', () => {
  const LEXICON = 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n    pronunciation: { ipa: "ˈʃtatʋærx" }\n';
  let dialplans: string;
  let empty: string;
  beforeAll(async () => {
    dialplans = path.join(dir, 'dialplans');
    empty = path.join(dir, 'no-lexicon');
    await fs.mkdir(dialplans, { recursive: true });
    await fs.mkdir(empty, { recursive: true });
    await fs.writeFile(path.join(dialplans, 'lexicon.yaml'), LEXICON);
  });
  const env = () => ({ SPRACHROHR_DIALPLANS_DIR: dialplans });
  /** A line as synthesis renders it with that lexicon (what the command must print for it). */
  const renderer = new SwissGermanRenderer();
  renderer.setLexicon(checkLexicon('lexicon.yaml', LEXICON));
  const rendered = (text: string, dialect: string, dialectText = false): string => {
    const item = prepareSpeech({ passages: [{ language: 'de-CH', dialect, items: [{ type: 'text', text }] }] }, renderer, undefined, { dialectText })
      .passages[0]!.items[0]!;
    return item.type === 'text' ? item.text : '';
  };

  it('renders standard input, one line for each line (empty ones too), with the lexicon beside the dialplans', async () => {
    const input = ['Guten Tag.', '', 'Die Stadtwerke sind offen.', 'Vielen Dank.'];
    const result = await runCliInProcess(['dialect', '--dialect', 'zurich'], env(), input.join('\n').replace('offen.\n', 'offen.\r\n'));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(input.map((line) => `${rendered(line, 'zurich')}\n`).join(''));
    expect(result.stdout).toContain('Stadtwärch');
    // Without a lexicon the built-in data renders the word.
    const plain = await runCliInProcess(['dialect', '--dialect', 'zurich', 'Die Stadtwerke sind offen.'], { SPRACHROHR_DIALPLANS_DIR: empty });
    expect(plain.stdout).not.toContain('Stadtwärch');
  });

  it('answers each line as it arrives, before standard input ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const running = runCommand(['dialect', '--dialect', 'bern'], { stdin, stdout, stderr: new PassThrough(), env: { ...process.env, ...env() } });
    stdin.write('Guten Tag.\n');
    const deadline = Date.now() + 10_000;
    while (printed === '' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(printed).toBe(`${rendered('Guten Tag.', 'bern')}\n`);
    stdin.end('Die Stadtwerke.\n');
    expect(await running).toBe(0);
    expect(printed).toBe(`${rendered('Guten Tag.', 'bern')}\n${rendered('Die Stadtwerke.', 'bern')}\n`);
  });

  it('explains each word: lexicon entry, phrase, pattern, word row with its source note, spelling rules', async () => {
    const result = await runCliInProcess(['dialect', '--dialect', 'zurich', '--explain'], env(), 'Guten Tag, die Stadtwerke melden am 3. Mai Kälte.\n');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(rendered('Guten Tag, die Stadtwerke melden am 3. Mai Kälte.', 'zurich'));
    expect(lines).toContain('  3. → dritten: clock times, numbers, dates and money written out');
    expect(lines).toContain(`  Stadtwerke → Stadtwärch: deployment lexicon, said /ˈʃtatʋærx/, entry at ${path.join(dialplans, 'lexicon.yaml')}:2:5`);
    expect(lines.find((line) => line.startsWith('  Guten Tag → Grüezi: '))).toMatch(/: phrase "guten tag" \(standard: .+\)$/);
    expect(lines.find((line) => line.startsWith('  die → d: pattern /'))).toMatch(/\(standard: .+\)$/);
    expect(lines.find((line) => line.startsWith('  dritten → '))).toMatch(/: (word "dritten" → ".+"|spelling rules? \/.+) \((standard|zurich): .+\)$/);
    expect(lines.find((line) => line.startsWith('  Kälte → '))).toMatch(/: (word "kälte" → ".+"|spelling rules? \/.+\/ → ".*") \((standard|zurich): .+\)$/);
  });

  it('keeps text written in the dialect with --dialect-text, writing out only its numbers', async () => {
    const result = await runCliInProcess(['dialect', '--dialect', 'bern', '--dialect-text', 'Chömed Sie am 3. Mai wieder.'], env());
    expect(result.stdout).toBe(`Chömed Sie am ${renderer.render('dritten', 'bern')} Mai wieder.\n`);
    expect(result.stdout).toBe(`${rendered('Chömed Sie am 3. Mai wieder.', 'bern', true)}\n`);
  });
});

describe('dialplan simulate with a lexicon', () => {
  it('speaks prompts with the lexicon beside the simulated file, and dialect_text prompts as written', async () => {
    const folder = path.join(dir, 'simulated');
    await fs.mkdir(folder, { recursive: true });
    await fs.writeFile(path.join(folder, 'lexicon.yml'), 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n');
    const file = path.join(folder, 'line.yaml');
    await fs.writeFile(
      file,
      'name: line\nroutes:\n  - number: "*"\n    language: de-CH\n    dialect: zurich\n    voice: anna\n    steps:\n' +
        '      - say: { text: "Die Stadtwerke sind heute geschlossen." }\n      - say: { text: "Mir händ hüt zue, chömed Sie morn.", dialect_text: true }\n',
    );
    const result = await runCliInProcess(['dialplan', 'simulate', file], {}, '');
    expect(result.code).toBe(0);
    const renderer = new SwissGermanRenderer();
    renderer.setLexicon(checkLexicon('lexicon.yml', 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n'));
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      `< ${renderer.render('Die Stadtwerke sind heute geschlossen.', 'zurich')}`,
      '< Mir händ hüt zue, chömed Sie morn.',
    ]);
    expect(result.stdout).toMatch(/^< D Stadtwärch /);
  });
});
