/**
 * Probe: a key is checked at the upgrade, but its open realtime sessions do not outlive it. A
 * revoked key, or a rotated key whose overlap is ended, loses its sessions within a second,
 * each told with the spec's error frame (nested on tts/stream, flat on stt/stream) and closed
 * with 1008; sessions of other keys go on.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened, type TestSocket } from '../helpers/ws-client.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => t?.close());

async function openSessions(key: string): Promise<{ tts: TestSocket; stt: TestSocket }> {
  const tts = opened(await connect(`${base}/tts/stream`, { headers: { 'X-API-Key': key } }));
  tts.send({ type: 'session.start', format: 'pcm16' });
  await tts.next('session.ready');
  const stt = opened(await connect(`${base}/stt/stream`, { protocols: ['speech.v1', `key.${key}`] }));
  stt.send({ type: 'config', lang: 'de' });
  await stt.next('session.ready');
  return { tts, stt };
}

/** Milliseconds until both sockets closed, after `since`. */
async function closedWithin(sockets: TestSocket[], since: number): Promise<number> {
  await Promise.all(sockets.map((socket) => socket.closed));
  return performance.now() - since;
}

describe('open realtime sessions of a key that stops working', () => {
  it('end within a second of a revocation, with the error frame and close code', async () => {
    const { key, record } = await t.services.keys.create('to be revoked', 'sandbox');
    const bystander = await openSessions(t.sandboxKey);
    const { tts, stt } = await openSessions(key);
    const revokedAt = performance.now();
    await t.services.keys.revoke(record.id);
    const elapsed = await closedWithin([tts, stt], revokedAt);
    expect(elapsed).toBeLessThan(1000);
    expect(tts.closeCode).toBe(1008);
    expect(stt.closeCode).toBe(1008);
    expect(tts.frames.at(-1)).toMatchObject({ type: 'error', error: { code: 'tts.forbidden', detail: expect.stringContaining('was revoked') } });
    expect(stt.frames.at(-1)).toMatchObject({ type: 'error', code: 'stt.forbidden', detail: expect.stringContaining('was revoked') });
    // The other key's sessions are untouched and still work.
    expect(bystander.tts.closeCode).toBeNull();
    expect(bystander.stt.closeCode).toBeNull();
    bystander.tts.send({ type: 'text.append', text: 'Noch da.' });
    bystander.tts.send({ type: 'session.end' });
    await bystander.tts.next('session.complete');
    bystander.stt.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.services.realtimeAdmission.snapshot().in_flight).toBe(0);
  });

  it('end within a second of the end of a rotation overlap', async () => {
    const created = await t.services.keys.create('to be rotated', 'sandbox');
    const { created: successor } = await t.services.keys.rotate(created.record.id);
    const { tts, stt } = await openSessions(created.key);
    expect(tts.upgradeHeaders['x-speech-key-status']).toMatch(/^superseded; stops working /);
    const endedAt = performance.now();
    await t.services.keys.endOverlap(created.record.id);
    expect(await closedWithin([tts, stt], endedAt)).toBeLessThan(1000);
    expect(tts.frames.at(-1)).toMatchObject({ type: 'error', error: { code: 'tts.forbidden', detail: expect.stringContaining('superseded by rotation') } });
    expect(stt.frames.at(-1)).toMatchObject({ type: 'error', code: 'stt.forbidden' });
    // The successor works.
    const fresh = await openSessions(successor.key);
    fresh.tts.close();
    fresh.stt.close();
    expect(fresh.tts.upgradeHeaders['x-speech-key-status']).toBeUndefined();
  });
});
