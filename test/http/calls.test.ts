/**
 * `/v1/calls` on the whole service started as `serve` starts it (in this process), with SIPp as
 * the callee: a call placed, followed and hung up over HTTP; the error envelope for every kind
 * of bad order (invalid numbers, unknown trunk, a trunk that is down, over the key's limit),
 * sandbox keys refused, and another account's calls invisible.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openKeyStore, startServer, type RunningServer } from '../../src/server.js';
import { expectError } from '../helpers/error-envelope.js';
import { assertSippPassed, sippScenario, startRtpSink, startSippServer, type RtpSink, type SippRun } from '../helpers/sipp.js';

/** `fetch`'s answer checked as the spec's error envelope; its `error`. */
async function expectErrorEnvelope(response: Response, status: number, code: string): Promise<{ error: { detail: string | null } }> {
  const body: unknown = await response.json();
  const error = expectError(
    { statusCode: response.status, json: () => body, headers: { 'x-speech-request-id': response.headers.get('x-speech-request-id') } },
    status,
    code,
  );
  return { error };
}

let dir: string;
let server: RunningServer;
let base: string;
let live: string;
let otherAccount: string;
let sandbox: string;
let refusingRegistrar: SippRun;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'http-calls-'));
  await fs.mkdir(path.join(dir, 'dialplans'));
  await fs.writeFile(
    path.join(dir, 'dialplans', 'reminder.yaml'),
    'name: reminder\nroutes:\n  - number: reminder\n    engines: synthetic\n    language: de-CH\n    voice: anna\n    steps:\n      - say: { text: \"Guten Tag, hier ist die Praxis Müller. Wir erinnern Sie an Ihren Termin morgen um neun Uhr. Auf Wiederhören.\" }\n      - hangup: {}\n',
  );
  // A trunk whose registrar refuses it (403): down, so calls through it are refused.
  refusingRegistrar = await startSippServer({
    scenario: sippScenario('registrar-refuses.uas.xml'),
    calls: 1,
    timeoutMs: 60_000,
    variables: { username: 'gw', password: 'the-registrar-expects-another' },
  });
  await fs.writeFile(
    path.join(dir, 'dialplans', 'trunks.yaml'),
    [
      'trunks:',
      '  - name: down',
      `    registrar: ${refusingRegistrar.address}`,
      '    username: gw',
      '    password_env: HTTP_CALLS_TRUNK_PASSWORD',
      '    options_interval_s: 0',
      '  - name: carrier',
      '    proxy: 127.0.0.1:9',
      '    register: false',
      '    options_interval_s: 0',
      '    max_calls: 1',
    ].join('\n'),
  );
  process.env['HTTP_CALLS_TRUNK_PASSWORD'] = 'secret-of-the-trunk';
  const env = {
    SPRACHROHR_DATA_DIR: path.join(dir, 'data'),
    SPRACHROHR_DIALPLANS_DIR: path.join(dir, 'dialplans'),
    SPRACHROHR_PORT: '0',
    SPRACHROHR_SIP_PORT: '0',
    SPRACHROHR_RTP_PORTS: '43260-43279',
    SPRACHROHR_TTS_ENGINE: 'none',
    SPRACHROHR_STT_ENGINE: 'none',
    SPRACHROHR_CALLS_PER_SECOND: '2',
    SPRACHROHR_CALLBACK_ALLOW: '127.0.0.0/8',
  };
  const config = loadConfig(env);
  const { store, keys, accounts } = await openKeyStore(config);
  live = (await keys.create('ops', 'live')).key;
  sandbox = (await keys.create('sandbox', 'sandbox')).key;
  const other = await accounts.create('other');
  otherAccount = (await keys.create('other', 'live', other.id)).key;
  await store.close();
  server = await startServer(config, pino({ level: 'silent' }));
  base = `${server.address}/v1`;
}, 30_000);
afterAll(async () => {
  await server?.close();
  await refusingRegistrar?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

/** A GET's JSON body. */
async function get(url: string, key = live): Promise<any> {
  const response = await fetch(`${base}${url}`, { headers: { 'X-API-Key': key } });
  expect(response.status).toBe(200);
  return response.json();
}

/** `read()` every 100 ms until `done` holds of it (at most `ms`); the last body. */
async function polled(read: () => Promise<any>, done: (body: any) => boolean, ms: number): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const body = await read();
    if (done(body)) return body;
    if (Date.now() > until) throw new Error(`never got there: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const post = (body: unknown, key = live): Promise<Response> =>
  fetch(`${base}/calls`, { method: 'POST', headers: { 'X-API-Key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('POST /v1/calls', () => {
  it('places a call, follows it to its end and lists it', async () => {
    const sink: RtpSink = await startRtpSink();
    const callee = await startSippServer({
      scenario: sippScenario('api-callee.uas.xml'),
      calls: 1,
      timeoutMs: 20_000,
      variables: { rtp_port: String(sink.port) },
    });
    const response = await post({ to: `sip:callee@${callee.address}`, dialplan: 'reminder.yaml', ring_timeout_s: 10 });
    expect(response.status).toBe(201);
    const call = (await response.json()) as any;
    expect(response.headers.get('location')).toBe(`/v1/calls/${call.id}`);
    expect(call).toMatchObject({ state: 'queued', to: `sip:callee@${callee.address}`, dialplan: 'reminder.yaml', route: 'reminder', bot: null, trunk: null });
    const seen = await polled(
      () => get(`/calls/${call.id}`),
      (body) => body.state === 'completed' || body.state === 'failed',
      15_000,
    );
    assertSippPassed(await callee.result);
    expect(sink.packets.length).toBeGreaterThan(10);
    await sink.close();
    expect(seen).toMatchObject({ state: 'completed', sip_status: 200, ended_by: 'callee', cause: null, early_media: true });
    expect(seen.duration_s).toBeGreaterThan(0);
    // Metered for the key's account as realtime use (sandbox: the route runs on the synthetic engines).
    const usage = await polled(
      () => get('/usage'),
      (body) => body.window.sandbox.requests > 0,
      3000,
    );
    expect(usage.window.sandbox.audio_seconds).toBeGreaterThan(1);
    expect((await get('/usage', otherAccount)).window.sandbox.requests).toBe(0);
    const list = await get('/calls?limit=5');
    expect(list.calls.map((listed: { id: string }) => listed.id)).toContain(call.id);
    // Another account neither sees nor hangs up this call.
    const foreign = await fetch(`${base}/calls/${call.id}`, { headers: { 'X-API-Key': otherAccount } });
    await expectErrorEnvelope(foreign, 404, 'stt.not_found');
    const foreignList = await get('/calls', otherAccount);
    expect(foreignList.calls).toEqual([]);
    await expectErrorEnvelope(await fetch(`${base}/calls/${call.id}`, { method: 'DELETE', headers: { 'X-API-Key': otherAccount } }), 404, 'stt.not_found');
  }, 30_000);

  it('answers bad orders with the envelope and a detail that names the problem', async () => {
    const cases: Array<[unknown, number, string, RegExp]> = [
      [{ to: '0441234567', dialplan: 'reminder' }, 400, 'stt.invalid_request', /neither an E\.164 number/],
      [{ to: '+41 44 123', dialplan: 'reminder', trunk: 'carrier' }, 400, 'stt.invalid_request', /neither an E\.164 number/],
      [{ to: '+41441234567', dialplan: 'reminder', trunk: 'nope' }, 400, 'stt.invalid_request', /no trunk "nope" in trunks\.yaml \(trunks: down, carrier\)/],
      [{ to: '+41441234567', dialplan: 'missing', trunk: 'carrier' }, 400, 'stt.invalid_request', /no dialplan "missing"/],
      [{ to: '+41441234567', trunk: 'carrier' }, 400, 'stt.invalid_request', /either dialplan .* or bot/],
      [{ to: '+41441234567', dialplan: 'reminder', trunk: 'carrier', ring_timeout_s: 1 }, 400, 'stt.invalid_request', /ring_timeout_s/],
      [{ to: '+41441234567', dialplan: 'reminder', trunk: 'carrier', surprise: 1 }, 400, 'stt.invalid_request', /surprise/],
      [{ dialplan: 'reminder' }, 400, 'stt.invalid_request', /to/],
      [{ to: '+41441234567', dialplan: 'reminder', trunk: 'down' }, 409, 'stt.call_unavailable', /trunk down is not registered: 401/],
    ];
    // The trunk is down once its registrar has refused the credentials.
    await polled(
      () => get('/trunks'),
      (body) => body.trunks.find((trunk: { name: string }) => trunk.name === 'down')?.registration?.state === 'failed',
      10_000,
    );
    for (const [body, status, code, detail] of cases) {
      const response = await post(body);
      const envelope = await expectErrorEnvelope(response, status, code);
      expect(envelope.error.detail, JSON.stringify(body)).toMatch(detail);
    }
    const malformed = await fetch(`${base}/calls`, { method: 'POST', headers: { 'X-API-Key': live, 'content-type': 'application/json' }, body: '{"to":' });
    await expectErrorEnvelope(malformed, 400, 'stt.invalid_request');
  });

  it('refuses sandbox keys, and keys over their calls per second; a trunk at max_calls is at capacity', async () => {
    await expectErrorEnvelope(await post({ to: 'sip:a@127.0.0.1', dialplan: 'reminder' }, sandbox), 403, 'stt.forbidden');
    await expectErrorEnvelope(await fetch(`${base}/calls`, { headers: { 'X-API-Key': sandbox } }), 403, 'stt.forbidden');
    // The carrier trunk's proxy (port 9, discard) never answers: each call stays queued or ringing until hung up.
    const first = await post({ to: '+41441234567', dialplan: 'reminder', trunk: 'carrier' });
    expect(first.status).toBe(201);
    const full = await post({ to: '+41441234568', dialplan: 'reminder', trunk: 'carrier' });
    const envelope = await expectErrorEnvelope(full, 429, 'stt.capacity');
    expect(envelope.error.detail).toMatch(/trunk carrier has 1 calls, its max_calls/);
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
    const second = await post({ to: 'sip:nobody@127.0.0.1:9', dialplan: 'reminder' });
    expect(second.status).toBe(201);
    const limited = await post({ to: 'sip:nobody@127.0.0.1:9', dialplan: 'reminder' });
    const rate = await expectErrorEnvelope(limited, 429, 'stt.rate_limited');
    expect(rate.error.detail).toMatch(/2 calls a second \(SPRACHROHR_CALLS_PER_SECOND\)/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const response of [first, second]) {
      const { id } = (await response.json()) as { id: string };
      const hungUp = await fetch(`${base}/calls/${id}`, { method: 'DELETE', headers: { 'X-API-Key': live } });
      expect(hungUp.status).toBe(200);
      expect(await hungUp.json()).toMatchObject({ id, state: 'failed', cause: 'cancelled' });
    }
    await expectErrorEnvelope(await fetch(`${base}/calls/call_nope`, { headers: { 'X-API-Key': live } }), 404, 'stt.not_found');
  }, 20_000);
});
