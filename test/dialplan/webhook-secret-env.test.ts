/**
 * `webhook_secret_env`: a dialplan file names the environment variable holding its own webhook
 * secret; the loader reads it from the environment it is given and hands it to every route of
 * the file. An unset or short variable, or a name that is no variable name, stops the load at
 * the field, and no message shows the value.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DialplanError, loadDialplans, parseDialplan, type DialplanLoadOptions } from '../../src/dialplan/dialplan-loader.js';

const SECRET = 'acme-dialplan-secret-0123456789abcdef';
const SHORT = 'too-short-0123456789';

const route = (number: string) => `  - number: "${number}"\n    language: en\n    voice: anna\n    steps:\n      - hangup: {}\n`;
/** A file of two routes; `field` is the `webhook_secret_env` line (line 2), or nothing. */
const plan = (field: string) => `name: acme\n${field}routes:\n${route('100')}${route('200')}`;

function problem(text: string, options: DialplanLoadOptions): DialplanError {
  try {
    parseDialplan('acme.yaml', text, options);
  } catch (error) {
    if (error instanceof DialplanError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('webhook_secret_env', () => {
  it('gives every route of the file the secret of the variable it names', () => {
    const routes = parseDialplan('acme.yaml', plan('webhook_secret_env: ACME_BOT_SECRET\n'), { env: { ACME_BOT_SECRET: SECRET } });
    expect(routes.map((loaded) => [loaded.number, loaded.webhookSecret])).toEqual([
      ['100', SECRET],
      ['200', SECRET],
    ]);
  });

  it('is read from process.env when no environment is given', () => {
    process.env['SPRACHROHR_TEST_DIALPLAN_SECRET'] = SECRET;
    try {
      const [first] = parseDialplan('acme.yaml', plan('webhook_secret_env: SPRACHROHR_TEST_DIALPLAN_SECRET\n'));
      expect(first?.webhookSecret).toBe(SECRET);
    } finally {
      delete process.env['SPRACHROHR_TEST_DIALPLAN_SECRET'];
    }
  });

  it('leaves the routes of a file without it with no secret of their own', () => {
    const routes = parseDialplan('acme.yaml', plan(''), { env: { ACME_BOT_SECRET: SECRET } });
    expect(routes.every((loaded) => !('webhookSecret' in loaded))).toBe(true);
  });

  it('is read from the environment the folder is loaded with, file by file', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dialplans-'));
    try {
      await fs.writeFile(path.join(dir, 'a.yaml'), `name: a\nwebhook_secret_env: A_SECRET\nroutes:\n${route('100')}`);
      await fs.writeFile(path.join(dir, 'b.yaml'), `name: b\nroutes:\n${route('200')}`);
      const plans = await loadDialplans(dir, { env: { A_SECRET: SECRET } });
      expect(plans.route('100')?.webhookSecret).toBe(SECRET);
      expect(plans.route('200')?.webhookSecret).toBeUndefined();
      await expect(loadDialplans(dir, { env: {} })).rejects.toThrow(/a\.yaml:2:21: webhook_secret_env names A_SECRET, which is not set/);
    } finally {
      await fs.rm(dir, { recursive: true });
    }
  });

  const refused: Array<[string, Record<string, string>, RegExp]> = [
    ['unset', {}, /^acme\.yaml:2:21: webhook_secret_env names ACME_BOT_SECRET, which is not set in the environment$/],
    ['empty', { ACME_BOT_SECRET: '' }, /^acme\.yaml:2:21: webhook_secret_env names ACME_BOT_SECRET, which is not set in the environment$/],
    [
      'shorter than 32 characters',
      { ACME_BOT_SECRET: SHORT },
      /^acme\.yaml:2:21: webhook_secret_env names ACME_BOT_SECRET, whose value is shorter than 32 characters$/,
    ],
  ];
  for (const [how, env, message] of refused) {
    it(`stops at the field when the variable is ${how}, without showing the value`, () => {
      const error = problem(plan('webhook_secret_env: ACME_BOT_SECRET\n'), { env });
      expect(error.message).toMatch(message);
      expect([error.line, error.column]).toEqual([2, 21]);
      expect(error.message).not.toContain(SHORT);
    });
  }

  const badNames = ['acme_bot_secret', '1SECRET', 'ACME-BOT', '', 'ACME BOT'];
  for (const name of badNames) {
    it(`refuses ${JSON.stringify(name)} as a variable name, at the field`, () => {
      const error = problem(plan(`webhook_secret_env: "${name}"\n`), { env: { [name]: SECRET } });
      expect(error.message).toMatch(/^acme\.yaml:2:21: webhook_secret_env must match pattern "\^\[A-Z_\]\[A-Z0-9_\]\*\$"$/);
    });
  }

  it('refuses a value that is not a name, such as a mapping', () => {
    const error = problem(plan('webhook_secret_env: { value: x }\n'), { env: {} });
    expect(error.message).toMatch(/^acme\.yaml:2:21: webhook_secret_env must be string$/);
  });
});
