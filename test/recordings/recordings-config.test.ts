import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config.js';

const SECRET = 'whsec-test-Z8mQ2vL5nR7tX1cB4kD9fH3jP6wS0yA';

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

describe('the recordings settings', () => {
  it('keep recordings 30 days and announce them nowhere by default', () => {
    expect(loadConfig({}).recordings).toEqual({ retentionDays: 30, webhook: null, secret: null });
  });

  it('keep the secret without an address, for webhook bots to sign with', () => {
    expect(loadConfig({ SPRACHROHR_WEBHOOK_SECRET: SECRET }).recordings).toEqual({ retentionDays: 30, webhook: null, secret: SECRET });
  });

  it('take a retention in days, 0 for keeping recordings until deleted', () => {
    expect(loadConfig({ SPRACHROHR_RECORDINGS_RETENTION_DAYS: '0' }).recordings.retentionDays).toBe(0);
    expect(loadConfig({ SPRACHROHR_RECORDINGS_RETENTION_DAYS: '365' }).recordings.retentionDays).toBe(365);
    for (const value of ['-1', '1.5', 'forever', '40000']) {
      expect(refusal({ SPRACHROHR_RECORDINGS_RETENTION_DAYS: value }).variable, value).toBe('SPRACHROHR_RECORDINGS_RETENTION_DAYS');
    }
  });

  it('take a webhook address only with a secret to sign with', () => {
    const url = 'https://crm.example.ch/hooks/voicemail';
    expect(loadConfig({ SPRACHROHR_RECORDINGS_WEBHOOK_URL: url, SPRACHROHR_WEBHOOK_SECRET: SECRET }).recordings.webhook).toEqual({ url, secret: SECRET });
    const unsigned = refusal({ SPRACHROHR_RECORDINGS_WEBHOOK_URL: url });
    expect(unsigned.variable).toBe('SPRACHROHR_WEBHOOK_SECRET');
    expect(unsigned.message).toMatch(/required when SPRACHROHR_RECORDINGS_WEBHOOK_URL is set/);
    expect(refusal({ SPRACHROHR_RECORDINGS_WEBHOOK_URL: url, SPRACHROHR_WEBHOOK_SECRET: 'short' }).variable).toBe('SPRACHROHR_WEBHOOK_SECRET');
  });

  it('refuse a webhook address that is not http(s) or carries credentials', () => {
    for (const url of ['crm.example.ch/hooks', 'ftp://crm.example.ch/', 'file:///etc/passwd', 'https://user:pw@crm.example.ch/hooks']) {
      expect(refusal({ SPRACHROHR_RECORDINGS_WEBHOOK_URL: url, SPRACHROHR_WEBHOOK_SECRET: SECRET }).variable, url).toBe('SPRACHROHR_RECORDINGS_WEBHOOK_URL');
    }
  });

  it('are documented with the other variables', () => {
    const names = CONFIG_VARIABLES.map(([name]) => name);
    for (const name of ['SPRACHROHR_RECORDINGS_RETENTION_DAYS', 'SPRACHROHR_RECORDINGS_WEBHOOK_URL', 'SPRACHROHR_WEBHOOK_SECRET'])
      expect(names).toContain(name);
  });
});
