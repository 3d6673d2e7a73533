/**
 * `/v1/tts/stream` over real sockets: sentence-by-sentence synthesis as text arrives, frames of
 * exactly `frame_bytes`, the stream rebuilt byte for byte against `POST /v1/tts`, binary
 * transport, marks, and bad frames.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { REALTIME_FRAMES } from '../../src/api/asyncapi.js';
import { CUT_OFF_GRACE_MS, SLOW_READER_TIMEOUT_MS } from '../../src/realtime/frame-channel.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened, TestSocket } from '../helpers/ws-client.js';

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/tts/stream`;
}, 60_000);
afterAll(async () => t?.close());

/** The audio of a finished session: JSON chunks in seq order, or binary frames in order. */
function audioOf(socket: TestSocket): Buffer {
  const chunks = socket.frames.filter((frame) => frame['type'] === 'audio.chunk');
  if (chunks.length === 0) return Buffer.concat(socket.binary);
  expect(chunks.map((chunk) => chunk['seq'])).toEqual(chunks.map((_, index) => index));
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk['data'] as string, 'base64')));
}

async function batch(key: string, body: Record<string, unknown>): Promise<Buffer> {
  const response = await t.app.inject({ method: 'POST', url: '/v1/tts', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.rawPayload;
}

const START = { type: 'session.start', model: 'swift', voice: 'anna', language: 'de-CH', format: 'pcm16', sample_rate_hz: 16000 };

describe('/v1/tts/stream', () => {
  it('speaks each sentence as it completes, in frames of exactly frame_bytes', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    socket.send(START);
    const ready = await socket.next('session.ready');
    expect(ready).toMatchObject({ voice: 'anna', language: 'de-CH', dialect: 'standard', encoding: 'pcm16', sample_rate_hz: 16000, frame_bytes: 640 });
    socket.send({ type: 'text.append', text: 'Grüezi mitenand. Wie chan' });
    // The first sentence is spoken before the rest of the text has arrived.
    const first = await socket.next('segment.done', 15_000);
    expect(first).toMatchObject({ characters: 'Grüezi mitenand.'.length, cache: 'miss' });
    expect(socket.frames.some((frame) => frame['type'] === 'audio.chunk')).toBe(true);
    socket.send({ type: 'text.append', text: ' ich Ihne hälfe?' });
    socket.send({ type: 'session.end' });
    const complete = await socket.next('session.complete', 15_000);
    expect(await socket.closed).toBe(1000);
    // Every frame is one the AsyncAPI document describes, in its documented shape.
    for (const frame of socket.frames)
      expect(Value.Check(REALTIME_FRAMES.tts.server[frame['type'] as string]!, frame), JSON.stringify(frame).slice(0, 200)).toBe(true);
    const chunks = socket.frames.filter((frame) => frame['type'] === 'audio.chunk');
    expect(complete['frames']).toBe(chunks.length);
    expect(complete['cache']).toEqual({ hits: 0, misses: 2 });
    const sizes = chunks.map((chunk) => Buffer.from(chunk['data'] as string, 'base64').length);
    expect(sizes.slice(0, -1).every((size) => size === 640)).toBe(true);
    expect(sizes.at(-1)!).toBeLessThanOrEqual(640);
    const streamed = audioOf(socket);
    expect(complete['duration_seconds']).toBeCloseTo(streamed.length / 2 / 16000, 3);
    // Two segments are two syntheses into one stream (one resampler runs through both, so
    // only the length, not each byte, matches the two batch results).
    const { type: _type, ...fields } = START;
    const separately =
      (await batch(t.liveKey, { ...fields, text: 'Grüezi mitenand.' })).length +
      (await batch(t.liveKey, { ...fields, text: 'Wie chan ich Ihne hälfe?' })).length;
    expect(Math.abs(streamed.length - separately)).toBeLessThan(0.02 * 16000 * 2);
  });

  it('rebuilds the batch stream byte for byte from its frames', async () => {
    // eSpeak NG itself is not byte-stable (two identical batch requests gave 47,210 and 47,198
    // bytes), so byte equality is checked on the deterministic sandbox engine.
    const start = { ...START, sample_rate_hz: 24000 };
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    socket.send(start);
    expect((await socket.next('session.ready'))['frame_bytes']).toBe(960);
    socket.send({ type: 'text.append', text: 'Willkommen bei der Hotline.' });
    socket.send({ type: 'session.end' });
    await socket.next('session.complete');
    const { type: _type, ...fields } = start;
    const streamed = audioOf(socket);
    expect(streamed.length).toBeGreaterThan(960 * 10);
    expect(streamed.equals(await batch(t.sandboxKey, { ...fields, text: 'Willkommen bei der Hotline.' }))).toBe(true);
  });

  it('sends raw binary frames with transport binary, µ-law at 8 kHz in 20 ms frames', async () => {
    const socket = opened(await connect(base, { protocols: ['speech.v1', `key.${t.sandboxKey}`] }));
    socket.send({ ...START, format: 'mulaw', sample_rate_hz: 8000, transport: 'binary' });
    expect((await socket.next('session.ready'))['frame_bytes']).toBe(160);
    socket.send({ type: 'text.append', text: 'Hallo' });
    socket.send({ type: 'text.flush' });
    await socket.next('segment.done');
    socket.send({ type: 'session.end' });
    await socket.next('session.complete');
    expect(socket.frames.filter((frame) => frame['type'] === 'audio.chunk')).toEqual([]);
    expect(socket.binary.slice(0, -1).every((frame) => frame.length === 160)).toBe(true);
    const { type: _type, transport: _transport, ...fields } = { ...START, format: 'mulaw', sample_rate_hz: 8000, transport: 'binary' };
    expect(Buffer.concat(socket.binary).equals(await batch(t.sandboxKey, { ...fields, text: 'Hallo' }))).toBe(true);
  });

  it('speaks a whole <speak> document at once, with its marks', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    socket.send(START);
    await socket.next('session.ready');
    socket.send({ type: 'text.append', text: '<speak>Guten Tag. <mark name="menu"/>Drücken Sie eins.</speak>' });
    const mark = await socket.next('mark', 15_000);
    expect(mark['name']).toBe('menu');
    expect(mark['offset_seconds']).toBeGreaterThan(0.3);
    await socket.next('segment.done');
    socket.send({ type: 'session.end' });
    await socket.next('session.complete');
  });

  it('answers bad frames with nested error frames and stays usable', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    const errors = () => socket.frames.filter((frame) => frame['type'] === 'error').map((frame) => frame['error'] as Record<string, unknown>);
    socket.send({ type: 'text.append', text: 'too early' });
    socket.send({ ...START, format: 'mp3' });
    socket.send({ ...START, speed: 5 });
    socket.send({ ...START, colour: 'blue' });
    socket.send({ ...START, voice: 'nobody' });
    socket.socket.send(Buffer.from([1, 2, 3]));
    socket.send(START);
    await socket.next('session.ready');
    socket.send({ type: 'text.append', text: '<speak>Hallo <blink>du</blink></speak>' });
    socket.send({ type: 'text.append', text: 'Es geht weiter.' });
    socket.send({ type: 'text.flush' });
    await socket.next('segment.done');
    socket.send({ type: 'session.end' });
    await socket.next('session.complete');
    for (const frame of socket.frames) expect(Value.Check(REALTIME_FRAMES.tts.server[frame['type'] as string]!, frame)).toBe(true);
    expect(errors().map((error) => error['code'])).toEqual([
      'tts.invalid_request',
      'tts.unsupported_format',
      'tts.invalid_speed',
      'tts.invalid_request',
      'tts.unknown_voice',
      'tts.invalid_request',
      'tts.invalid_ssml',
    ]);
    for (const error of errors()) expect(Object.keys(error).sort()).toEqual(['code', 'detail', 'message', 'request_id']);
    expect(errors()[1]!['detail']).toMatch(/mp3 cannot be streamed/);
  });

  it('frees every session slot and encoder when sockets close mid-synthesis, and meters what was made', async () => {
    const lookup = await t.services.keys.lookup(t.liveKey);
    if (lookup.status !== 'active') throw new Error('the live key is not active');
    const principal = { keyId: lookup.record.id, environment: lookup.record.environment, accountId: lookup.record.accountId, keyStatus: null };
    const usedBefore = (await t.services.meter.today(principal, 'tts')).used;
    const sockets = await Promise.all(Array.from({ length: 6 }, async () => opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }))));
    for (const socket of sockets) {
      socket.send({ ...START, format: 'opus', sample_rate_hz: 48000 });
      socket.send({ type: 'text.append', text: 'Dies ist ein langer Satz, der eine Weile dauert. '.repeat(8) });
    }
    await Promise.all(sockets.map((socket) => socket.next('audio.chunk', 15_000)));
    for (const socket of sockets) socket.socket.terminate();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.services.realtimeAdmission.snapshot().in_flight).toBe(0);
    // Sessions cut off mid-synthesis are metered for the audio they made.
    expect((await t.services.meter.today(principal, 'tts')).used).toBeGreaterThan(usedBefore);
    // The engine and the encoders are free: a new session speaks at once.
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.liveKey } }));
    socket.send({ ...START, format: 'opus', sample_rate_hz: 48000 });
    socket.send({ type: 'text.append', text: 'Noch da.' });
    socket.send({ type: 'session.end' });
    await socket.next('session.complete', 15_000);
  });

  it('waits for a reader that does not read, then cuts the session off instead of buffering', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    socket.send({ ...START, sample_rate_hz: 48000 });
    await socket.next('session.ready');
    // The client stops reading; minutes of 48 kHz audio are asked for.
    socket.socket.pause();
    const stoppedAt = performance.now();
    socket.send({ type: 'text.append', text: 'Dies ist ein Satz mit vielen Wörtern, der lange dauert. '.repeat(60) });
    socket.send({ type: 'session.end' });
    // A client that reads nothing cannot answer the close frame queued behind the audio: the
    // server drops the connection (and frees the session's slot) shortly after the 10 s wait,
    // not after ws's 30 s close timeout.
    while (t.services.realtimeAdmission.snapshot().in_flight > 0 && performance.now() - stoppedAt < 25_000)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const lastedMs = performance.now() - stoppedAt;
    expect(lastedMs).toBeGreaterThan(SLOW_READER_TIMEOUT_MS);
    expect(lastedMs).toBeLessThan(SLOW_READER_TIMEOUT_MS + CUT_OFF_GRACE_MS + 1500);
    const timeout = t.logs.find((line) => line['code'] === 'tts.timeout');
    expect(String(timeout?.['detail'] ?? '')).toContain('the client read nothing for 10 s');
    socket.socket.resume();
    expect(await socket.closed).toBe(1006);
    // What was sent before is whole frames in order; the rest was never made.
    expect(socket.frames.some((frame) => frame['type'] === 'session.complete')).toBe(false);
  }, 30_000);

  it('refuses a handshake without a key with the tts error family', async () => {
    const refused = await connect(base);
    if (refused instanceof TestSocket) throw new Error('accepted without a key');
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error.code).toBe('tts.unauthenticated');
  });
});
