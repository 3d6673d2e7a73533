/**
 * Probe: no response of any endpoint, to any key, carries a secret of the deployment or the
 * path of its data folder. Every secret variable is set to a recognisable value; every HTTP
 * endpoint (answers and refusals, sandbox and live keys) and every realtime frame is searched
 * for each of them.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav } from '../helpers/audio-fixtures.js';
import { multipartBody } from '../helpers/multipart.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened } from '../helpers/ws-client.js';

const SECRETS = {
  SPRACHROHR_KEY_SECRET: 'key-secret-Q7xV2mLp9RtZ4wKc8NbY3hJd6FgS1aE0',
  SPRACHROHR_SIP_DIGEST_PASSWORD: 'sip-password-Hk3Tz9Wq2Lx7',
  SPRACHROHR_DRACHTIO_SECRET: 'drachtio-secret-Vb5Nc8Mr1Ps4',
  SPRACHROHR_DATA_DIR: '/var/lib/sprachrohr-data-Jy6Gd2Ku9Fw3',
  SPRACHROHR_SIP_TLS_KEY: '/etc/sprachrohr/tls-key-Xe4Ra7Qo2Ui8.pem',
  SPRACHROHR_ADMIN_TOKEN: 'admin-token-Pz8Lq3Wn6Tc1Vm4',
} as const;

const ENV = {
  ...SECRETS,
  SPRACHROHR_SIP_DIGEST_USER: 'gateway',
  SPRACHROHR_SIP_TLS_CERT: '/etc/sprachrohr/cert.pem',
  SPRACHROHR_DRACHTIO: '127.0.0.1:9022',
};

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp(ENV);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => t?.close());

/** Fails naming the secret when `text` contains any of them. */
function expectNoSecret(where: string, text: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text.includes(value), `${where} reveals ${name}`).toBe(false);
  }
}

describe('secrets stay inside the process', () => {
  it('are set in the configuration the app runs on (so that the probe can find a leak)', () => {
    expect(t.services.config.keySecret).toBe(SECRETS.SPRACHROHR_KEY_SECRET);
    expect(t.services.config.telephony.digest?.password).toBe(SECRETS.SPRACHROHR_SIP_DIGEST_PASSWORD);
    expect(t.services.config.telephony.drachtio?.secret).toBe(SECRETS.SPRACHROHR_DRACHTIO_SECRET);
    expect(t.services.config.dataDir).toBe(SECRETS.SPRACHROHR_DATA_DIR);
    expect(t.services.config.operations.adminToken).toBe(SECRETS.SPRACHROHR_ADMIN_TOKEN);
  });

  it('appear in no HTTP response of any endpoint, answer or refusal, to either key', async () => {
    const wav = toneWav(0.5);
    const upload = multipartBody({ lang: 'en' }, { bytes: wav, type: 'audio/wav' });
    const requests: Array<{ method: 'GET' | 'POST'; url: string; payload?: unknown; headers?: Record<string, string> }> = [
      { method: 'GET', url: '/v1/capabilities' },
      { method: 'GET', url: '/v1/tts/voices' },
      { method: 'GET', url: '/v1/openapi.json' },
      { method: 'GET', url: '/v1/asyncapi.json' },
      { method: 'GET', url: '/healthz' },
      { method: 'GET', url: '/readyz' },
      { method: 'GET', url: '/metrics' },
      { method: 'POST', url: '/v1/admin/drain' },
      { method: 'POST', url: '/v1/tts', payload: { text: 'Grüezi', format: 'wav' } },
      { method: 'POST', url: '/v1/tts', payload: { text: 'Grüezi', output: 'json' } },
      { method: 'POST', url: '/v1/tts', payload: { text: '<speak><foo/></speak>' } },
      { method: 'POST', url: '/v1/tts', payload: '{not json', headers: { 'content-type': 'application/json' } },
      { method: 'POST', url: '/v1/stt', payload: upload.payload, headers: upload.headers },
      { method: 'POST', url: '/v1/stt', payload: 'x', headers: { 'content-type': 'multipart/form-data' } },
      { method: 'GET', url: '/v1/tts/stream' },
      { method: 'GET', url: '/v1/nowhere' },
    ];
    let checked = 0;
    for (const key of [t.sandboxKey, t.liveKey, 'sv_test_wrong', undefined]) {
      for (const request of requests) {
        const response = await t.app.inject({
          method: request.method,
          url: request.url,
          headers: {
            ...(key ? { 'x-api-key': key } : {}),
            ...(typeof request.payload === 'object' && !Buffer.isBuffer(request.payload) ? { 'content-type': 'application/json' } : {}),
            ...request.headers,
          },
          ...(request.payload !== undefined ? { payload: request.payload as string } : {}),
        });
        const where = `${request.method} ${request.url} (${key ? key.slice(0, 8) : 'no key'}) → ${response.statusCode}`;
        expectNoSecret(where, JSON.stringify(response.headers));
        expectNoSecret(where, response.rawPayload.toString('latin1'));
        expectNoSecret(where, response.body);
        checked++;
      }
    }
    expect(checked).toBe(requests.length * 4);
  });

  it('capabilities publish only the named capacity figures', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(Object.keys(capabilities.capacity.limits).sort()).toEqual([
      'burst_per_second',
      'key_max_in_flight',
      'max_in_flight',
      'requests_per_minute',
      'sandbox_key_max_in_flight',
    ]);
  });

  it('appear in no realtime frame', async () => {
    const tts = opened(await connect(`ws://127.0.0.1:${port}/v1/tts/stream`, { headers: { 'X-API-Key': t.sandboxKey } }));
    tts.send({ type: 'session.start', format: 'pcm16' });
    tts.send({ type: 'text.append', text: 'Grüezi mitenand.' });
    tts.send({ type: 'text.append', text: '<speak><foo/></speak>' });
    tts.send({ type: 'session.end' });
    await tts.closed;
    const stt = opened(await connect(`ws://127.0.0.1:${port}/v1/stt/stream`, { headers: { 'X-API-Key': t.sandboxKey } }));
    stt.send({ type: 'config', lang: 'de' });
    stt.send({ type: 'audio.append', data: Buffer.from(toneWav(0.2).subarray(44)).toString('base64') });
    stt.send({ type: 'audio.end' });
    await stt.closed;
    expect(tts.frames.length).toBeGreaterThan(0);
    expect(stt.frames.length).toBeGreaterThan(0);
    expectNoSecret('tts/stream frames', JSON.stringify(tts.frames) + JSON.stringify(tts.upgradeHeaders));
    expectNoSecret('stt/stream frames', JSON.stringify(stt.frames) + JSON.stringify(stt.upgradeHeaders));
  });
});
