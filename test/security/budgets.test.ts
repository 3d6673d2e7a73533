/**
 * Probe: the daily audio budget is counted as audio is made or heard, not only checked when
 * work starts. A request that would overdraw it is refused whole and unbilled; a realtime
 * session that reaches it is told and closed; parallel work under one key stays within it.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { toneWav } from '../helpers/audio-fixtures.js';
import { multipartBody } from '../helpers/multipart.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened } from '../helpers/ws-client.js';

/** The sandbox voice speaks 14 characters per second: 139 characters are just under 10 s. */
const TEN_SECONDS_OF_TEXT = 'a'.repeat(139);

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function withBudget(seconds: number): Promise<TestApp> {
  t = await createTestApp({ SPRACHROHR_SANDBOX_DAILY_AUDIO_SECONDS: String(seconds) });
  return t;
}

async function used(app: TestApp, direction: 'tts' | 'stt'): Promise<number> {
  const principal = {
    keyId: (await app.services.keys.list()).find((key) => key.environment === 'sandbox')!.id,
    environment: 'sandbox' as const,
    accountId: 'acct_default',
    keyStatus: null,
  };
  return (await app.services.meter.today(principal, direction)).used;
}

function synth(app: TestApp, text: string) {
  return app.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'x-api-key': app.sandboxKey, 'content-type': 'application/json' },
    payload: { text, format: 'pcm16' },
  });
}

describe('batch requests and the daily audio budget', () => {
  it('refuses a synthesis longer than what is left, before any audio, and bills nothing', async () => {
    const app = await withBudget(60);
    const refused = await synth(app, 'a'.repeat(7000));
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({ code: 'tts.rate_limited', detail: expect.stringContaining('daily audio budget of 60 s') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await used(app, 'tts')).toBe(0);
    // What fits still works, and is billed.
    expect((await synth(app, TEN_SECONDS_OF_TEXT)).statusCode).toBe(200);
    expect(await used(app, 'tts')).toBe(10);
  });

  it('lets parallel requests under one key together use no more than the budget', async () => {
    const app = await withBudget(60);
    // Twenty 10 s requests at once against 60 s: six fit.
    const responses = await Promise.all(Array.from({ length: 20 }, () => synth(app, TEN_SECONDS_OF_TEXT)));
    const served = responses.filter((response) => response.statusCode === 200).length;
    expect(responses.every((response) => response.statusCode === 200 || response.statusCode === 429)).toBe(true);
    expect(served).toBe(6);
    expect(await used(app, 'tts')).toBe(60);
  });

  it('refuses a recording longer than what is left, unheard and unbilled', async () => {
    const app = await withBudget(5);
    const upload = (seconds: number) => multipartBody({ lang: 'en' }, { bytes: toneWav(seconds), type: 'audio/wav' });
    const long = upload(8);
    const refused = await app.app.inject({ method: 'POST', url: '/v1/stt', headers: { 'x-api-key': app.sandboxKey, ...long.headers }, payload: long.payload });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('stt.rate_limited');
    expect(await used(app, 'stt')).toBe(0);
    const short = upload(3);
    const served = await app.app.inject({ method: 'POST', url: '/v1/stt', headers: { 'x-api-key': app.sandboxKey, ...short.headers }, payload: short.payload });
    expect(served.statusCode).toBe(200);
    expect(await used(app, 'stt')).toBe(3);
  });
});

describe('realtime sessions and the daily audio budget', () => {
  async function listen(app: TestApp): Promise<string> {
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    return `ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1`;
  }

  it('tells and closes a synthesis session whose audio reaches the budget, and bills what it made', async () => {
    const app = await withBudget(30);
    const base = await listen(app);
    const socket = opened(await connect(`${base}/tts/stream`, { headers: { 'X-API-Key': app.sandboxKey } }));
    socket.send({ type: 'session.start', format: 'pcm16', sample_rate_hz: 8000 });
    await socket.next('session.ready');
    // Six 10 s sentences against a 30 s budget.
    for (let i = 0; i < 6; i++) socket.send({ type: 'text.append', text: `${'a'.repeat(138)}. ` });
    socket.send({ type: 'session.end' });
    const error = (await socket.next('error', 15_000))['error'] as Record<string, unknown>;
    expect(error).toMatchObject({ code: 'tts.rate_limited', detail: expect.stringContaining('daily audio budget of 30 s') });
    expect(await socket.closed).toBe(1008);
    expect(socket.frames.some((frame) => frame['type'] === 'session.complete')).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const billed = await used(app, 'tts');
    expect(billed).toBeGreaterThanOrEqual(20);
    expect(billed).toBeLessThanOrEqual(30);
  });

  it('tells and closes a recognition session whose audio reaches the budget, and bills what it heard', async () => {
    const app = await withBudget(4);
    const base = await listen(app);
    const socket = opened(await connect(`${base}/stt/stream`, { headers: { 'X-API-Key': app.sandboxKey } }));
    socket.send({ type: 'config', lang: 'en' });
    await socket.next('session.ready');
    // Ten seconds of 16 kHz PCM16 in half-second frames, against a 4 s budget.
    const second = Buffer.from(toneWav(0.5).subarray(44));
    for (let i = 0; i < 20 && socket.closeCode === null; i++) socket.socket.send(second);
    const error = await socket.next('error', 15_000);
    expect(error).toMatchObject({ code: 'stt.rate_limited', detail: expect.stringContaining('daily audio budget of 4 s') });
    expect(await socket.closed).toBe(1008);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await used(app, 'stt')).toBe(4);
  });
});
