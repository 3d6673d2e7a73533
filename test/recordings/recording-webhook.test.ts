/**
 * The announcement of new recordings to a real HTTP receiver on loopback: the body, the
 * signature a receiver recomputes with the shared secret, retries on what may pass and none on
 * what will not, and no redirect followed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-logger.js';
import { WebhookSender } from '../../src/recordings/webhook-sender.js';
import { message, recordingFixture, type RecordingFixture } from './recording-fixture.js';

const SECRET = 'whsec-test-Z8mQ2vL5nR7tX1cB4kD9fH3jP6wS0yA';

/** What the receiver was sent. */
interface Received {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver that answers with `statuses` in turn (the last one from then on). */
async function receiver(statuses: number[], headers: Record<string, string> = {}) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(statuses[Math.min(received.length, statuses.length) - 1]!, headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/voicemail`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** How a receiver checks a call: the HMAC of `<timestamp>.<raw body>`, compared in constant time. */
function verify(received: Received, secret: string): boolean {
  const timestamp = received.headers['x-speech-webhook-timestamp'];
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${received.body}`).digest('hex')}`;
  const given = String(received.headers['x-speech-webhook-signature']);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function announcing(statuses: number[], retryDelaysMs = [1000, 2000, 4000, 8000]): Promise<{ f: RecordingFixture; received: Received[] }> {
  const target = await receiver(statuses);
  cleanups.push(target.close);
  const f = await recordingFixture({ config: { webhook: { url: target.url, secret: SECRET } }, webhookTiming: { retryDelaysMs } });
  cleanups.push(f.close);
  return { f, received: target.received };
}

describe('announcing a new recording', () => {
  it('POSTs recording.created once the transcript is settled, signed with the secret', async () => {
    const { f, received } = await announcing([204]);
    const before = Math.floor(Date.now() / 1000);
    const saved = await f.service.save(message());
    await f.service.whenIdle();
    expect(received).toHaveLength(1);
    const call = received[0]!;
    expect(call.headers['content-type']).toBe('application/json');
    const timestamp = Number(call.headers['x-speech-webhook-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(call.headers['x-speech-webhook-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verify(call, SECRET)).toBe(true);
    expect(verify(call, `${SECRET}x`)).toBe(false);
    expect(verify({ ...call, body: call.body.replace('de-CH', 'fr-CH') }, SECRET)).toBe(false);
    expect(JSON.parse(call.body)).toEqual({
      type: 'recording.created',
      recording: {
        id: saved.id,
        call_id: 'a84b4c76e66710@pc33.example.ch',
        route: '+41445551234',
        caller: '+41791234567',
        called: '+41445551234',
        language: 'de-CH',
        created_at: '2026-03-01T08:00:00.000Z',
        duration_seconds: 1,
        size_bytes: 16044,
        sample_rate_hz: 8000,
        ended_by: 'silence',
        transcript: { status: 'unavailable', text: null, confidence: null },
        expires_at: '2026-03-31T08:00:00.000Z',
      },
    });
    expect(f.logs.some((line) => line.msg === 'webhook delivered' && line.recording === saved.id && line.attempts === 1)).toBe(true);
  });

  it('tries again after a 503, and delivers', async () => {
    const { f, received } = await announcing([503, 200]);
    const started = Date.now();
    await f.service.save(message());
    await f.service.whenIdle();
    expect(received).toHaveLength(2);
    // The first wait of the backoff (1 s) came between the two.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(received.every((call) => verify(call, SECRET))).toBe(true);
    expect(received[0]!.body).toBe(received[1]!.body);
    expect(f.logs.some((line) => line.msg === 'webhook delivered' && line.attempts === 2)).toBe(true);
  });

  it('gives up at once on a 400', async () => {
    const { f, received } = await announcing([400, 200]);
    const saved = await f.service.save(message());
    await f.service.whenIdle();
    expect(received).toHaveLength(1);
    expect(f.logs.some((line) => line.msg === 'webhook given up' && line.recording === saved.id && line.status === 400 && line.attempts === 1)).toBe(true);
  });

  it('gives up after five attempts when the receiver keeps failing or rate-limits', async () => {
    for (const status of [500, 429]) {
      const { f, received } = await announcing([status], [5, 5, 5, 5]);
      await f.service.save(message());
      await f.service.whenIdle();
      expect(received, String(status)).toHaveLength(5);
      expect(f.logs.some((line) => line.msg === 'webhook given up' && line.attempts === 5 && line.status === status)).toBe(true);
    }
  });
});

describe('a webhook delivery', () => {
  it('follows no redirect', async () => {
    const elsewhere = await receiver([200]);
    const redirecting = await receiver([302], { Location: elsewhere.url });
    cleanups.push(elsewhere.close, redirecting.close);
    const { logger, logs } = capturedLogger();
    const sender = new WebhookSender({ url: redirecting.url, secret: SECRET }, logger, { retryDelaysMs: [5, 5, 5, 5] });
    const outcome = await sender.deliver('{"type":"recording.created"}', { recording: 'rec_x' }, new AbortController().signal);
    expect(outcome).toEqual({ delivered: false, attempts: 1, status: 302 });
    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    expect(logs.some((line) => line.msg === 'webhook refused' && line.status === 302)).toBe(true);
  });

  it('retries when nobody listens, and stops waiting when told to', async () => {
    const gone = await receiver([200]);
    await gone.close();
    const { logger, logs } = capturedLogger();
    const unreachable = new WebhookSender({ url: gone.url, secret: SECRET }, logger, { retryDelaysMs: [5, 5, 5, 5] });
    expect(await unreachable.deliver('{}', {}, new AbortController().signal)).toEqual({ delivered: false, attempts: 5, status: null });
    expect(logs.filter((line) => line.msg === 'webhook not reached' && line.reason === 'ECONNREFUSED')).toHaveLength(5);
    const stop = new AbortController();
    const patient = new WebhookSender({ url: gone.url, secret: SECRET }, logger, { retryDelaysMs: [60_000] });
    const started = Date.now();
    const delivery = patient.deliver('{}', {}, stop.signal);
    setTimeout(() => stop.abort(), 50);
    expect((await delivery).delivered).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times an attempt out when the receiver does not answer', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { logger, logs } = capturedLogger();
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    const sender = new WebhookSender({ url, secret: SECRET }, logger, { retryDelaysMs: [], attemptTimeoutMs: 200 });
    expect(await sender.deliver('{}', {}, new AbortController().signal)).toEqual({ delivered: false, attempts: 1, status: null });
    expect(logs.some((line) => line.msg === 'webhook not reached' && line.reason === 'TimeoutError')).toBe(true);
  });
});
