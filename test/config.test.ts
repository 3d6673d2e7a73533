import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, keySecret: null, logLevel: 'info', publicBaseUrl: null });
    expect(config.dataDir).toMatch(/data$/);
    expect(config).toMatchObject({ evaluationSeconds: 3600, creditRates: { tts: 1, stt: 1 }, notices: { smtpUrl: null } });
    expect(loadConfig({ SPRACHROHR_CREDITS_PER_STT_SECOND: '0.25' }).creditRates.stt).toBe(0.25);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['SPRACHROHR_PORT', 'eighty', /SPRACHROHR_PORT: must be a whole number/],
    ['SPRACHROHR_PORT', '70000', /SPRACHROHR_PORT: must be between 0 and 65535/],
    ['SPRACHROHR_LOG_LEVEL', 'loud', /SPRACHROHR_LOG_LEVEL: must be one of/],
    ['SPRACHROHR_KEY_SECRET', 'short', /SPRACHROHR_KEY_SECRET: must be at least 32/],
    ['SPRACHROHR_PUBLIC_BASE_URL', 'ftp://x', /SPRACHROHR_PUBLIC_BASE_URL/],
    ['SPRACHROHR_MAX_IN_FLIGHT', '0', /SPRACHROHR_MAX_IN_FLIGHT: must be between 1/],
    ['SPRACHROHR_SHUTDOWN_GRACE_MS', '-1', /SPRACHROHR_SHUTDOWN_GRACE_MS/],
    ['SPRACHROHR_SMTP_URL', 'mail.example.ch', /SPRACHROHR_SMTP_URL: must be a URL/],
    ['SPRACHROHR_SMTP_URL', 'http://mail.example.ch', /must start with smtp:\/\/ or smtps:\/\//],
    ['SPRACHROHR_CREDITS_PER_TTS_SECOND', 'two', /must be a decimal number/],
    ['SPRACHROHR_CALLBACK_ALLOW', '10.0.0.0/8,intranet', /SPRACHROHR_CALLBACK_ALLOW: "intranet" is not an address or CIDR range/],
    ['SPRACHROHR_EVALUATION_SECONDS', '-5', /SPRACHROHR_EVALUATION_SECONDS: must be a whole number/],
    ['SPRACHROHR_DATABASE_URL', 'db.example.ch', /SPRACHROHR_DATABASE_URL: must be an address like postgres:/],
    ['SPRACHROHR_DATABASE_URL', 'mysql://u:secret@db/x', /must start with postgres:\/\/ or postgresql:\/\/, not mysql:/],
    ['SPRACHROHR_DATABASE_URL', 'postgres://u:secret@db.example.ch', /SPRACHROHR_DATABASE_URL: names no database/],
    ['SPRACHROHR_DATABASE_URL', 'postgres://db.example.ch/x?max=0', /max \(the pool size\) must be a whole number from 1 to 1000/],
    ['SPRACHROHR_DRAIN_TIMEOUT_MS', 'soon', /SPRACHROHR_DRAIN_TIMEOUT_MS: must be a whole number/],
    ['SPRACHROHR_DRAIN_TIMEOUT_MS', '86400001', /must be between 0 and 86400000/],
    ['SPRACHROHR_METRICS_TOKEN', 'short', /SPRACHROHR_METRICS_TOKEN: must be at least 16/],
    ['SPRACHROHR_METRICS_TOKEN', 'a token with spaces in it', /must not contain spaces/],
    ['SPRACHROHR_ADMIN_TOKEN', '0123456789abcde', /SPRACHROHR_ADMIN_TOKEN: must be at least 16/],
  ];
  for (const [name, value, message] of bad) {
    it(`names ${name} when it is ${value}`, () => {
      let error: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(name);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('secret');
    });
  }

  it('takes a PostgreSQL URL only with a key secret every instance shares', () => {
    const url = 'postgresql://gateway:pw@db.example.ch:5432/sprachrohr?max=20';
    expect(() => loadConfig({ SPRACHROHR_DATABASE_URL: url })).toThrow(/SPRACHROHR_KEY_SECRET: must be set when SPRACHROHR_DATABASE_URL is/);
    const config = loadConfig({ SPRACHROHR_DATABASE_URL: url, SPRACHROHR_KEY_SECRET: 'k'.repeat(32) });
    expect(config.databaseUrl).toBe(url);
    expect(loadConfig({}).databaseUrl).toBeNull();
  });
});
