/** The operations settings: defaults and their documentation (refused values: test/config.test.ts), and the bearer check. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { bearerMatches } from '../../src/operations/bearer-token.js';
import { OPERATIONS_CONFIG_VARIABLES } from '../../src/operations/operations-config.js';

describe('operations configuration', () => {
  it('defaults to a 25 s drain, open metrics and no drain endpoint', () => {
    expect(loadConfig({}).operations).toEqual({ drainTimeoutMs: 25_000, metricsToken: null, adminToken: null });
    expect(loadConfig({ SPRACHROHR_DRAIN_TIMEOUT_MS: '600000', SPRACHROHR_METRICS_TOKEN: 'a'.repeat(16) }).operations).toMatchObject({
      drainTimeoutMs: 600_000,
      metricsToken: 'a'.repeat(16),
    });
  });

  it('lists every variable in --help and in docs/configuration.md', () => {
    const documented = fs.readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const names = CONFIG_VARIABLES.map(([name]) => name);
    for (const [name] of OPERATIONS_CONFIG_VARIABLES) {
      expect(names).toContain(name);
      expect(documented).toContain(`\`${name}\``);
    }
  });
});

describe('bearerMatches', () => {
  const token = 'the-right-token-123';
  it.each([
    [`Bearer ${token}`, true],
    [`bearer ${token}`, true],
    [[`Bearer ${token}`], true],
    [`Bearer ${token}x`, false],
    [`Bearer ${token.slice(1)}`, false],
    [`Basic ${token}`, false],
    [token, false],
    ['Bearer', false],
    [`Bearer ${token} extra`, false],
    [undefined, false],
  ])('%j → %s', (header, expected) => {
    expect(bearerMatches(header, token)).toBe(expected);
  });
});
