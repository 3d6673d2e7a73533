/**
 * Probes of the HTTP transport over real sockets, as a careless or hostile client sends them:
 * bodies that trickle in, broken multipart forms, requests Node's parser or fastify's router
 * refuse, and Host headers that try to get into the discovery documents. Each answer is the
 * spec's error envelope with the right code, never a 500, a framework body or a held slot.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav } from '../helpers/audio-fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { multipartBody } from '../helpers/multipart.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const BODY_TIMEOUT_MS = 600;
const MIN_RATE = 2000;

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp({
    SPRACHROHR_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    SPRACHROHR_BODY_MIN_RATE: String(MIN_RATE),
    SPRACHROHR_SANDBOX_KEY_MAX_IN_FLIGHT: '4',
    SPRACHROHR_MAX_IN_FLIGHT: '6',
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => t?.close());

interface RawAnswer {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
  readonly ms: number;
}

/**
 * Sends raw bytes (`head` at once, then `trickle` one byte every `everyMs`, without ever
 * ending), and resolves with the answer when the server closes the connection.
 */
function rawRequest(head: string | Buffer, options: { trickle?: string; everyMs?: number; end?: boolean } = {}): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      if (options.end) socket.end();
      let at = 0;
      if (options.trickle) {
        timer = setInterval(() => {
          if (at < options.trickle!.length && socket.writable) socket.write(options.trickle![at++]!);
        }, options.everyMs ?? 100);
      }
    });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      const [headers = '', body = ''] = received.split('\r\n\r\n');
      resolve({ status: Number(headers.split(' ')[1]), headers, body, ms: performance.now() - started });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 15 s; got ${JSON.stringify(received.slice(0, 300))}`));
    }, 15_000).unref();
  });
}

function post(path: string, key: string, contentType: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n`;
}

describe('slow request bodies', () => {
  it('hold no in-flight slot: other keys are served while one key trickles bodies, which time out with the envelope', async () => {
    const body = JSON.stringify({ text: 'Grüezi mitenand, das ist ein langsamer Körper.' });
    // As many trickling bodies as the sandbox key may have in flight (4), against a process
    // ceiling of 6 slots.
    const slow = Array.from({ length: 4 }, () =>
      rawRequest(post('/v1/tts', t.sandboxKey, 'application/json', Buffer.byteLength(body)), { trickle: body, everyMs: 150 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(t.services.admission.snapshot().in_flight).toBe(0);
    // Another key is served at once, up to its own ceiling of 4 (with the trickling bodies
    // holding 4 of the process's 6 slots, two of these would be refused).
    const { key: other } = await t.services.keys.create('bystander', 'sandbox');
    const served = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/tts',
          headers: { 'x-api-key': other, 'content-type': 'application/json' },
          payload: { text: 'Hallo', format: 'pcm16' },
        }),
      ),
    );
    expect(served.map((response) => response.statusCode)).toEqual([200, 200, 200, 200]);
    // A fifth body of the trickling key is refused before it is read.
    const fifth = await rawRequest(post('/v1/tts', t.sandboxKey, 'application/json', Buffer.byteLength(body)), { trickle: body, everyMs: 150 });
    expect(fifth.status).toBe(429);
    expect(JSON.parse(fifth.body).error).toMatchObject({ code: 'tts.capacity', detail: 'key_capacity' });
    for (const answer of await Promise.all(slow)) {
      expect(answer.status).toBe(504);
      expect(JSON.parse(answer.body).error).toMatchObject({ code: 'tts.timeout', detail: expect.stringContaining('arrived too slowly') });
      expect(answer.headers.toLowerCase()).toContain('connection: close');
      // Cut off soon after the grace, long before the trickle would have ended (8 s).
      expect(answer.ms).toBeLessThan(BODY_TIMEOUT_MS + 2000);
    }
  });

  it('let a body through that keeps the minimum rate, however long it is', async () => {
    const body = JSON.stringify({ text: 'a'.repeat(200), format: 'pcm16' });
    // 20 bytes every 5 ms: 4000 bytes per second, twice the minimum, for longer than the grace.
    const socket = net.connect(port, '127.0.0.1');
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      socket.on('connect', async () => {
        socket.write(post('/v1/tts', t.sandboxKey, 'application/json', Buffer.byteLength(body)));
        for (let at = 0; at < body.length; at += 20) {
          socket.write(body.slice(at, at + 20));
          await new Promise((done) => setTimeout(done, 5));
        }
      });
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
        if (received.includes('\r\n\r\n')) resolve(received);
      });
    });
    socket.destroy();
    expect(answer.split(' ')[1]).toBe('200');
  });

  it('that stop short of their Content-Length time out on the recognition endpoint too', async () => {
    const form = '--x\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF1234';
    const answer = await rawRequest(post('/v1/stt', t.sandboxKey, 'multipart/form-data; boundary=x', form.length + 1000) + form);
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body).error.code).toBe('stt.timeout');
  });
});

describe('broken multipart forms', () => {
  const cases: Array<[name: string, contentType: string, body: string, detail: string]> = [
    ['without a boundary', 'multipart/form-data', '--x\r\nContent-Disposition: form-data; name="lang"\r\n\r\nen\r\n--x--\r\n', 'names no multipart boundary'],
    ['with a boundary over 256 characters', `multipart/form-data; boundary=${'b'.repeat(300)}`, `--${'b'.repeat(300)}\r\n\r\n`, 'longer than 256 characters'],
    [
      'cut short inside the audio',
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF1234',
      'ends early',
    ],
    ['cut short inside a part header', 'multipart/form-data; boundary=x', '--x\r\nContent-Dispos', 'ends early'],
    ['that is not multipart at all', 'multipart/form-data; boundary=x', 'hello world', 'ends early'],
  ];
  for (const [name, contentType, body, detail] of cases) {
    it(`answer 400 with the envelope: ${name}`, async () => {
      const answer = await rawRequest(post('/v1/stt', t.sandboxKey, contentType, Buffer.byteLength(body)) + body, { end: true });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toMatchObject({ code: 'stt.invalid_request', detail: expect.stringContaining(detail) });
    });
  }
});

describe('clients that hang up at once', () => {
  it('give back the in-flight slot of a whole recognition upload, however early they leave', async () => {
    const form = multipartBody({ lang: 'en' }, { bytes: toneWav(2), type: 'audio/wav' });
    const head = post('/v1/stt', t.sandboxKey, String(form.headers['content-type']), form.payload.length);
    // Sent whole, then the connection is dropped: some before their form is read, some while
    // their slot is taken, some while they are being answered.
    for (let round = 0; round < 20; round++) {
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(Buffer.concat([Buffer.from(head, 'latin1'), form.payload]), () => {
            setTimeout(() => socket.destroy(), round % 4);
            resolve();
          });
        });
        socket.on('error', () => undefined);
      });
    }
    await eventually(() => t.services.admission.snapshot().in_flight === 0, 5000, 'every slot to come back');
    // And the key is served: its four slots are free.
    const answer = await rawRequest(Buffer.concat([Buffer.from(head.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n'), 'latin1'), form.payload]));
    expect(answer.status, answer.body).toBe(200);
  });
});

describe('requests refused before a route runs', () => {
  it('answer a URL that cannot be decoded with the envelope', async () => {
    const answer = await rawRequest(`GET /v1/tts/%E0%A4%A HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.sandboxKey}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'tts.invalid_request', detail: expect.stringContaining('percent-encoding') });
    expect(answer.body).not.toContain('FST_');
  });

  it('answer headers that are too large with the envelope', async () => {
    const answer = await rawRequest(`GET /v1/capabilities HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'tts.invalid_request', detail: expect.stringContaining('headers are too large') });
  });

  it('answer a Content-Length that is not a number with the envelope', async () => {
    const answer = await rawRequest(
      `POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.sandboxKey}\r\nContent-Type: application/json\r\nContent-Length: twelve\r\n\r\n{}`,
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'tts.invalid_request', detail: expect.stringContaining('Content-Length') });
  });

  it('answer a body shorter than its Content-Length, closed by the client, with the envelope', async () => {
    // The client has closed only its sending side: the answer still reaches it.
    const answer = await rawRequest(post('/v1/tts', t.sandboxKey, 'application/json', 100) + '{"text":', { end: true });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'tts.invalid_request', detail: expect.stringContaining('ended before the whole request') });
  });
});

describe('the Host header', () => {
  it('puts no more than a host and port into the discovery documents', async () => {
    const hostile = await rawRequest(`GET /v1/openapi.json HTTP/1.1\r\nHost: evil.example/phish?x=\r\nX-API-Key: ${t.sandboxKey}\r\nConnection: close\r\n\r\n`);
    expect(hostile.status).toBe(200);
    expect(hostile.body).not.toContain('evil.example');
    const capabilities = await rawRequest(
      `GET /v1/capabilities HTTP/1.1\r\nHost: api.example.ch:8443\r\nX-API-Key: ${t.sandboxKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(JSON.parse(capabilities.body.slice(capabilities.body.indexOf('{'))).api.base_url).toBe('http://api.example.ch:8443/v1');
  });
});
