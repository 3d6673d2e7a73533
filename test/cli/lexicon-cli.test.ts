/**
 * The deployment lexicon on the command line: `serve` refuses a bad one at start with its
 * FILE:LINE:COLUMN (exit 78), and a lexicon file named where it would be read as a dialplan;
 * `dialplan check` checks it.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
