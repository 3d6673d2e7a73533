/**
 * `/v1/stt/stream` over real sockets: authentication in its three forms, the frames of spec
 * 6.2 with the sandbox and with pocketsphinx, bad frames, capacity, idle timeout and leaks.
 */
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { concatPcm } from '../../src/audio/pcm.js';
import { REALTIME_FRAMES } from '../../src/api/asyncapi.js';
import { silencePcm } from '../helpers/speech-audio.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened, TestSocket } from '../helpers/ws-client.js';

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_STT_ENGINE: 'pocketsphinx', SPRACHROHR_REALTIME_KEY_MAX_SESSIONS: '12' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/stt/stream`;
}, 60_000);
afterAll(async () => t?.close());

/** Debian's recording "go forward ten meters" (16 kHz PCM16) with a second of silence after. */
function goForward(): Buffer {
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const pcm = concatPcm([new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)), silencePcm(1, 16000)]);
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** Waits until `condition` holds (at most five seconds). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not come true within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends audio in 20 ms binary frames (or base64 `audio.append` frames). */
function sendAudio(socket: TestSocket, audio: Buffer, form: 'binary' | 'base64' = 'binary'): void {
  for (let at = 0; at < audio.length; at += 640) {
    const piece = audio.subarray(at, at + 640);
    if (form === 'binary') socket.socket.send(piece);
    else socket.send({ type: 'audio.append', data: piece.toString('base64') });
  }
}

describe('/v1/stt/stream handshake', () => {
  it('refuses a missing or unknown key with 401 before the upgrade', async () => {
    for (const headers of [{}, { 'X-API-Key': 'sv_nope' }] as Array<Record<string, string>>) {
      const refused = await connect(base, { headers });
      expect(refused).not.toBeInstanceOf(TestSocket);
      if (refused instanceof TestSocket) return;
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body).error.code).toBe('stt.unauthenticated');
    }
  });

  it('answers a plain GET with 400, holding no session slot', async () => {
    const response = await t.app.inject({ url: '/v1/stt/stream', headers: { 'x-api-key': t.liveKey } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'stt.invalid_request', detail: expect.stringContaining('is a WebSocket endpoint') });
    expect(t.services.realtimeAdmission.snapshot().in_flight).toBe(0);
  });

  it('closes the connection after a refused handshake, whatever the client does', async () => {
    const port = (t.app.server.address() as AddressInfo).port;
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(
      [
        'GET /v1/stt/stream HTTP/1.1',
        'Host: localhost',
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        '',
        '',
      ].join('\r\n'),
    );
    // The client never closes: the service does, once the 401 is out.
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toContain('"code":"stt.unauthenticated"');
  });

  it('takes the key as a header, as a subprotocol beside speech.v1, or as a query parameter', async () => {
    const byHeader = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    expect(byHeader.upgradeHeaders['x-speech-environment']).toBe('live');
    expect(byHeader.upgradeHeaders['x-speech-request-id']).toMatch(/^req_/);
    const byProtocol = opened(await connect(base, { protocols: ['speech.v1', `key.${t.sandboxKey}`] }));
    expect(byProtocol.socket.protocol).toBe('speech.v1');
    expect(byProtocol.upgradeHeaders['x-speech-environment']).toBe('sandbox');
    const byQuery = opened(await connect(`${base}?api_key=${encodeURIComponent(t.liveKey)}`));
    for (const socket of [byHeader, byProtocol, byQuery]) socket.close();
    await Promise.all([byHeader.closed, byProtocol.closed, byQuery.closed]);
  });
});

describe('/v1/stt/stream recognition', () => {
  it('streams partials and a final for live speech, then completes', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    socket.send({ type: 'config', lang: 'en', vocabulary: [] });
    const ready = await socket.next('session.ready');
    expect(ready['request_id']).toMatch(/^req_/);
    sendAudio(socket, goForward());
    socket.send({ type: 'audio.end' });
    const final = await socket.next('transcript.final', 20_000);
    expect(final).toMatchObject({ text: 'go forward ten meters', lang: 'en' });
    expect((final['words'] as Array<{ w: string }>).map((word) => word.w)).toEqual(['go', 'forward', 'ten', 'meters']);
    const partials = socket.frames.filter((frame) => frame['type'] === 'transcript.partial');
    expect(partials.length).toBeGreaterThanOrEqual(2);
    expect(partials.every((frame) => frame['lang'] === 'en' && typeof frame['duration_s'] === 'number')).toBe(true);
    expect((await socket.next('session.complete'))['request_id']).toBe(ready['request_id']);
    expect(await socket.closed).toBe(1000);
    // Every frame is one the AsyncAPI document describes, in its documented shape.
    for (const frame of socket.frames)
      expect(Value.Check(REALTIME_FRAMES.stt.server[frame['type'] as string]!, frame), JSON.stringify(frame).slice(0, 200)).toBe(true);
  });

  it('takes base64 audio.append frames, and answers sandbox keys with the synthetic recogniser', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    socket.send({ type: 'config', lang: 'de-CH' });
    await socket.next('session.ready');
    sendAudio(socket, goForward(), 'base64');
    socket.send({ type: 'audio.end' });
    const final = await socket.next('transcript.final');
    expect(final['lang']).toBe('de-CH');
    // Partials as a live session sends them (every 250 ms of speech), each the final's words so far.
    const partials = socket.frames.filter((frame) => frame['type'] === 'transcript.partial');
    expect(partials.length).toBeGreaterThanOrEqual(2);
    for (const partial of partials) {
      expect(String(final['text']).startsWith(String(partial['text']))).toBe(true);
      expect(partial['text']).toMatch(/^Synthetisches/);
      expect(Value.Check(REALTIME_FRAMES.stt.server['transcript.partial']!, partial)).toBe(true);
    }
    expect(socket.frames.indexOf(partials.at(-1)!)).toBeLessThan(socket.frames.indexOf(final));
    await socket.next('session.complete');
  });

  it('answers bad frames with flat error frames and stays usable', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    const errors = () => socket.frames.filter((frame) => frame['type'] === 'error');
    socket.socket.send('not json');
    socket.send({ no: 'type' });
    socket.socket.send(Buffer.alloc(640));
    socket.send({ type: 'config', lang: 'de-CH' });
    socket.send({ type: 'config', lang: 'xx-YY' });
    socket.send({ type: 'config', lang: 'en', vocabulary: 'pay my bill' });
    socket.send({ type: 'dance' });
    socket.send({ type: 'config', lang: 'en', vocabulary: ['pay my bill', 'opening hours'] });
    await socket.next('session.ready');
    socket.send({ type: 'audio.append', data: 'not base64!' });
    socket.send({ type: 'config', lang: 'en' });
    await until(() => errors().length >= 9);
    expect(errors().map((frame) => frame['code'])).toEqual([
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_request',
      'stt.invalid_audio',
      'stt.invalid_request',
    ]);
    for (const frame of errors()) {
      expect(Value.Check(REALTIME_FRAMES.stt.server['error']!, frame)).toBe(true);
      expect(Object.keys(frame).sort()).toEqual(['code', 'detail', 'message', 'request_id', 'type']);
      expect(frame['request_id']).toMatch(/^req_/);
    }
    expect(errors()[3]!['detail']).toMatch(/no recogniser for de-CH is installed.*sprachrohr models pull vosk-model-small-de-0.15/);
    sendAudio(socket, goForward());
    socket.send({ type: 'audio.end' });
    // The grammar makes the recogniser choose among the phrases (or nothing).
    expect(['', 'pay my bill', 'opening hours']).toContain((await socket.next('transcript.final', 20_000))['text']);
    socket.send({ type: 'audio.end' });
    await socket.next('session.complete');
  });

  it('holds back a client that sends audio more than 20 s ahead of real time', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    socket.send({ type: 'config', lang: 'en' });
    await socket.next('session.ready');
    const started = performance.now();
    // 23 s of audio at once: 20 s are taken at once, the last 3 s only as real time passes.
    for (let second = 0; second < 23; second++) socket.socket.send(Buffer.alloc(32_000));
    socket.send({ type: 'audio.end' });
    await socket.next('session.complete', 15_000);
    expect(performance.now() - started).toBeGreaterThan(2500);
    socket.close();
  });

  it('closes a session that sends nothing', async () => {
    const quiet = await createTestApp({ SPRACHROHR_REALTIME_IDLE_TIMEOUT_MS: '300' });
    try {
      await quiet.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `ws://127.0.0.1:${(quiet.app.server.address() as AddressInfo).port}/v1/stt/stream`;
      const socket = opened(await connect(url, { headers: { 'X-API-Key': quiet.sandboxKey } }));
      const error = await socket.next('error', 5000);
      expect(error).toMatchObject({ code: 'stt.timeout' });
      expect(await socket.closed).toBe(1000);
    } finally {
      await quiet.close();
    }
  });
});

describe('/v1/stt/stream capacity and resources', () => {
  it('counts session opens against the key’s own budget (bursts of 25, 600 a minute)', async () => {
    const limited = await createTestApp({}, { realRateLimit: true });
    try {
      await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `ws://127.0.0.1:${(limited.app.server.address() as AddressInfo).port}/v1/stt/stream`;
      let opened = 0;
      let refused: { status: number; body: string; headers: Record<string, string | string[] | undefined> } | null = null;
      // The test app's clock stands still: the bucket does not refill during the burst.
      for (let i = 0; i < 60 && !refused; i++) {
        const result = await connect(url, { headers: { 'X-API-Key': limited.sandboxKey } });
        if (result instanceof TestSocket) {
          opened += 1;
          result.socket.terminate();
        } else {
          refused = result;
        }
      }
      expect(opened).toBe(25);
      expect(refused?.status).toBe(429);
      expect(JSON.parse(refused!.body).error.code).toBe('stt.rate_limited');
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });

  it('refuses sessions over the key ceiling with 429 and the reason, and frees every slot when sockets close', async () => {
    const sockets = await Promise.all(Array.from({ length: 12 }, async () => opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }))));
    const refused = await connect(base, { headers: { 'X-API-Key': t.liveKey } });
    if (refused instanceof TestSocket) throw new Error('a thirteenth session was accepted');
    expect(refused.status).toBe(429);
    expect(refused.headers['x-speech-capacity-reason']).toBe('key_capacity');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body).error.code).toBe('stt.capacity');
    // Closed at every moment: before config, after it, mid-audio (eight recognition streams:
    // all that the one pocketsphinx worker takes).
    sockets.forEach((socket, index) => {
      if (index % 3 > 0) socket.send({ type: 'config', lang: 'en' });
      if (index % 3 === 2) sendAudio(socket, goForward().subarray(0, 32_000));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const socket of sockets) socket.socket.terminate();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.services.realtimeAdmission.snapshot().in_flight).toBe(0);
    // The recogniser's streams were all given back: as many sessions as it takes open again.
    const again = await Promise.all(Array.from({ length: 8 }, async () => opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }))));
    for (const socket of again) socket.send({ type: 'config', lang: 'en' });
    await Promise.all(again.map((socket) => socket.next('session.ready')));
    for (const socket of again) socket.close();
    await Promise.all(again.map((socket) => socket.closed));
  });
});
