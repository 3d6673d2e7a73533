/**
 * Job completion callbacks (spec 6.3): where they may go (https, no credentials, public
 * addresses only, unless SPRACHROHR_CALLBACK_ALLOW says otherwise), how they are signed, what
 * the job records of each attempt, retries, and that a name is checked again at delivery and
 * the connection goes to the address that was checked (no DNS rebinding). The receiving end
 * is a real HTTP server on loopback.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineRegistry } from '../../engine/registry.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { JobSchema } from '../../src/api/job-schemas.js';
import type { Principal } from '../../src/auth/authenticate.js';
import { loadConfig } from '../../src/config.js';
import { CallbackSender } from '../../src/jobs/callback-sender.js';
import { CallbackAllowList, CallbackTargetError, checkCallbackTarget, type Resolver } from '../../src/jobs/callback-target.js';
import { JobRunner } from '../../src/jobs/job-runner.js';
import { JobService } from '../../src/jobs/job-service.js';
import { UsageMeter } from '../../src/metering/usage-meter.js';
import { startEngines } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';
import { expectSchema } from '../helpers/schema-check.js';
import { FileBlobStore } from '../../src/store/file-blob-store.js';

const PUBLIC = '93.184.216.34';
/** A resolver that answers from a table, one answer per call in turn (the last one repeats). */
function resolver(table: Record<string, string[][]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const answers = table[hostname];
    if (!answers) throw new Error('ENOTFOUND');
    const answer = answers[Math.min(calls.filter((name) => name === hostname).length - 1, answers.length - 1)]!;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('callback targets', () => {
  const none = new CallbackAllowList([]);
  const names = resolver({ 'hooks.example.ch': [[PUBLIC]], 'rebind.example.ch': [[PUBLIC, '10.0.0.1']], 'inside.example.ch': [['192.168.1.20']] });
  const refusals: Array<[string, RegExp]> = [
    ['http://hooks.example.ch/done', /must be https/],
    ['ftp://hooks.example.ch/done', /must be https/],
    ['https://user:secret@hooks.example.ch/done', /must not carry credentials/],
    ['not a url', /is not a URL/],
    ['https://127.0.0.1/done', /127\.0\.0\.1, which is not a public address/],
    ['https://10.1.2.3/done', /not a public address/],
    ['https://172.16.0.1/done', /not a public address/],
    ['https://192.168.1.1/done', /not a public address/],
    ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254, which is not a public address/],
    ['https://100.64.0.1/done', /not a public address/],
    ['https://[::1]/done', /not a public address/],
    ['https://[fd12:3456::1]/done', /not a public address/],
    ['https://[fe80::1]/done', /not a public address/],
    ['https://[::ffff:127.0.0.1]/done', /not a public address/],
    ['https://[::ffff:10.0.0.1]/done', /not a public address/],
    ['https://inside.example.ch/done', /inside\.example\.ch resolves to 192\.168\.1\.20/],
    ['https://rebind.example.ch/done', /resolves to 10\.0\.0\.1/],
    ['https://nowhere.example.ch/done', /does not resolve/],
    [`https://hooks.example.ch/${'x'.repeat(2000)}`, /longer than 2000/],
  ];
  for (const [url, reason] of refusals) {
    it(`refuses ${url.slice(0, 60)}`, async () => {
      const error = await checkCallbackTarget(url, none, names).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CallbackTargetError);
      expect((error as Error).message).toMatch(reason);
    });
  }

  it('takes a public https target, and what the operator allows (plain http only there)', async () => {
    expect(await checkCallbackTarget('https://hooks.example.ch/done?job=1', none, names)).toMatchObject({ address: PUBLIC, family: 4 });
    const loopback = new CallbackAllowList(['127.0.0.0/8', '::1']);
    expect(await checkCallbackTarget('http://127.0.0.1:9000/done', loopback, names)).toMatchObject({ address: '127.0.0.1' });
    expect(await checkCallbackTarget('http://[::1]:9000/done', loopback, names)).toMatchObject({ address: '::1', family: 6 });
    await expect(checkCallbackTarget('http://hooks.example.ch/done', loopback, names)).rejects.toThrow(
      /plain http only to addresses in SPRACHROHR_CALLBACK_ALLOW/,
    );
    expect(() => new CallbackAllowList(['10.0.0.0/x'])).toThrow(/not an address or CIDR range/);
  });
});

describe('callback delivery', () => {
  let dir: string;
  let engines: EngineRegistry;
  let server: http.Server;
  let port = 0;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  /** Statuses the receiving end answers, in turn; 200 once they are used up. */
  const answers: number[] = [];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-callbacks-'));
    await Promise.all([loadMp3Encoder(), loadResampler()]);
    engines = await startEngines(loadConfig({ SPRACHROHR_TTS_ENGINE: 'none', SPRACHROHR_STT_ENGINE: 'none' }));
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(answers.shift() ?? 200, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await engines.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const sandbox: Principal = { keyId: 'key_cb', accountId: DEFAULT_ACCOUNT_ID, environment: 'sandbox', keyStatus: null };

  function open(names: Resolver) {
    const store = SqliteStore.open(':memory:');
    const allow = new CallbackAllowList(['127.0.0.0/8']);
    const meter = new UsageMeter({
      usage: store.usage,
      entitlements: store.entitlements,
      budgets: { live: 36_000, sandbox: 7_200 },
      rates: { tts: 1, stt: 1 },
    });
    const callbacks = new CallbackSender({
      jobs: store.jobs,
      accounts: store.accounts,
      allow,
      baseUrl: () => 'https://speech.example.ch/v1',
      logger: pino({ level: 'silent' }),
      resolver: names,
      backoffMs: [50],
    });
    const runner = new JobRunner({
      jobs: store.jobs,
      engines,
      meter,
      callbacks,
      blobs: new FileBlobStore(path.join(dir, 'jobs')),
      logger: pino({ level: 'silent' }),
    });
    return { store, runner, callbacks, service: new JobService(store.jobs, engines, runner, { allow, resolver: names }) };
  }

  async function done(side: ReturnType<typeof open>) {
    await side.runner.idle();
    for (let i = 0; i < 50 && side.callbacks; i++) {
      await side.callbacks.settle();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('POSTs the finished Job, signed with the account secret, and records the delivery', async () => {
    const side = open(resolver({}));
    await side.runner.start();
    received.length = 0;
    const job = await side.service.submit(sandbox, { kind: 'tts', text: 'Fertig.', callback_url: `http://127.0.0.1:${port}/hook?x=1` });
    await done(side);
    expect(received).toHaveLength(1);
    const [{ headers, body }] = received as [{ headers: http.IncomingHttpHeaders; body: string }];
    const secret = (await side.store.accounts.findById(DEFAULT_ACCOUNT_ID))!.webhookSecret;
    const timestamp = headers['x-speech-webhook-timestamp'] as string;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(headers['x-speech-webhook-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
    expect(headers['content-type']).toBe('application/json');
    const sent = JSON.parse(body);
    expectSchema(JobSchema, sent);
    expect(sent).toMatchObject({ id: job.id, status: 'succeeded', callback: { delivered_at: null, attempts: 1, error: null } });
    expect(sent.audio.url).toBe(`https://speech.example.ch/v1/jobs/${job.id}/audio`);
    const after = await side.service.get(sandbox, job.id);
    expect(after.callback).toMatchObject({ attempts: 1, error: null });
    expect(after.callback.deliveredAt).not.toBeNull();
    await side.runner.stop();
    await side.store.close();
  });

  it('tries again after a failure, follows no redirect, and gives up after five attempts', async () => {
    const side = open(resolver({}));
    await side.runner.start();
    received.length = 0;
    answers.push(500, 302);
    const job = await side.service.submit(sandbox, { kind: 'tts', text: 'Nochmals.', callback_url: `http://127.0.0.1:${port}/hook` });
    await done(side);
    expect(received).toHaveLength(3);
    expect((await side.service.get(sandbox, job.id)).callback).toMatchObject({ attempts: 3, error: null });
    // A target that never answers well: five attempts, the last error kept.
    answers.push(503, 503, 503, 503, 503);
    const doomed = await side.service.submit(sandbox, { kind: 'tts', text: 'Nie.', callback_url: `http://127.0.0.1:${port}/hook` });
    await done(side);
    expect((await side.service.get(sandbox, doomed.id)).callback).toEqual({ deliveredAt: null, attempts: 5, error: 'answered 503' });
    await side.runner.stop();
    await side.store.close();
  });

  it('checks the name again at delivery and connects to the address it checked', async () => {
    // Submission sees the loopback address; at delivery the name says 10.0.0.1: refused, not connected.
    const rebinding = resolver({ 'hooks.test': [['127.0.0.1'], ['10.0.0.1']] });
    const side = open(rebinding);
    await side.runner.start();
    received.length = 0;
    const job = await side.service.submit(sandbox, { kind: 'tts', text: 'Umgeleitet.', callback_url: `http://hooks.test:${port}/hook` });
    await done(side);
    expect(received).toHaveLength(0);
    expect((await side.service.get(sandbox, job.id)).callback.error).toMatch(/hooks\.test resolves to 10\.0\.0\.1, which is not a public address/);
    await side.runner.stop();
    await side.store.close();
    // A name only our resolver knows: delivered, so the connection used the checked address, not a lookup of its own.
    const pinned = open(resolver({ 'hooks.test': [['127.0.0.1']] }));
    await pinned.runner.start();
    const second = await pinned.service.submit(sandbox, { kind: 'tts', text: 'Gepinnt.', callback_url: `http://hooks.test:${port}/hook` });
    await done(pinned);
    expect((await pinned.service.get(sandbox, second.id)).callback).toMatchObject({ attempts: 1, error: null });
    expect(received.at(-1)!.headers.host).toBe(`hooks.test:${port}`);
    await pinned.runner.stop();
    await pinned.store.close();
  });
});
