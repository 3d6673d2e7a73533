/**
 * `sprachrohr dialplan check`: the shipped dialplans pass; a broken file is named with its
 * line and column, a number routed twice across files and an unreadable file are reported,
 * and the exit status says whether everything passed. The command runs in this process
 * (`runCliInProcess`: the dispatch, output and exit status of the installed command); the
 * built command's own exit status is tested in cli.test.ts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli.js';

const SHIPPED = fileURLToPath(new URL('../../dialplans/echo.yaml', import.meta.url));

const GOOD = `name: desk
routes:
  - number: "100"
    language: de-CH
    dialect: zurich
    voice: anna
    steps:
      - answer: {}
      - say: { text: "Grüezi" }
      - hangup: {}
`;

/** A goto whose target no step has, on line 8, column 15. */
const BROKEN = `name: broken
routes:
  - number: "200"
    language: en
    voice: jonas
    steps:
      - answer: {}
      - goto: nowhere
`;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-dialplan-check-'));
  await fs.writeFile(path.join(dir, 'good.yaml'), GOOD);
  await fs.writeFile(path.join(dir, 'broken.yaml'), BROKEN);
  await fs.writeFile(path.join(dir, 'again.yaml'), GOOD.replace('name: desk', 'name: again'));
});
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

describe('sprachrohr dialplan check', () => {
  it('passes the shipped dialplan and a good file, with exit 0', async () => {
    const result = await runCliInProcess(['dialplan', 'check', SHIPPED, path.join(dir, 'good.yaml')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${SHIPPED}: ok (1 route)`);
    expect(result.stdout).toContain('good.yaml: ok (1 route)');
    expect(result.stderr).toBe('');
  });

  it('names each problem as FILE:LINE:COLUMN: message and exits 1', async () => {
    const broken = path.join(dir, 'broken.yaml');
    const result = await runCliInProcess([
      'dialplan',
      'check',
      path.join(dir, 'good.yaml'),
      broken,
      path.join(dir, 'again.yaml'),
      path.join(dir, 'missing.yaml'),
    ]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe(`${broken}:8:15: goto names no step: "nowhere"`);
    expect(lines[1]).toContain('again.yaml:0:0: the number 100 is routed twice (also in');
    expect(lines[2]).toMatch(/missing\.yaml:0:0: cannot be read: ENOENT/);
    expect(lines[3]).toBe('sprachrohr dialplan: 3 problems in 4 files');
    expect(result.stdout).toContain('good.yaml: ok (1 route)');
  });

  it('warns of steps nothing reaches, and still passes the file', async () => {
    const file = path.join(dir, 'unreached.yaml');
    await fs.writeFile(file, GOOD.replace('"100"', '"300"').replace('      - hangup: {}\n', '      - hangup: {}\n      - say: { text: "Nie" }\n'));
    const result = await runCliInProcess(['dialplan', 'check', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('unreached.yaml: ok (1 route)');
    expect(result.stderr.trim()).toBe(`${file}:11:9: warning: step 4 is never reached`);
  });

  it('refuses a missing action or file list with usage help', async () => {
    expect((await runCliInProcess(['dialplan'])).code).toBe(2);
    expect((await runCliInProcess(['dialplan', 'check'])).stderr).toContain('give the dialplan files to check');
    expect((await runCliInProcess(['dialplan', 'lint', 'x.yaml'])).stderr).toContain('unknown action "lint"; the actions are check and simulate');
  });
});
