/**
 * What keeps the realtime service healthy beyond one protocol: the heartbeat that cuts off a
 * client that stopped answering pings, and the `host_load` refusal of new sessions while the
 * event loop is already late for the open ones. Real sockets, sandbox keys.
 */
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened, TestSocket } from '../helpers/ws-client.js';

const HEARTBEAT_MS = 400;

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_REALTIME_HEARTBEAT_MS: String(HEARTBEAT_MS), SPRACHROHR_REALTIME_MAX_LOOP_DELAY_MS: '100' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/stt/stream`;
}, 60_000);
afterAll(async () => t?.close());

/** Keeps the event loop busy for `ms` (what an overloaded process looks like from inside). */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

describe('realtime heartbeat', () => {
  it('cuts off a client that does not answer pings and frees its session slot', async () => {
    const socket = new WebSocket(base, { headers: { 'X-API-Key': t.sandboxKey }, autoPong: false });
    let pings = 0;
    socket.on('ping', () => (pings += 1));
    const openedAt = await new Promise<number>((resolve, reject) => {
      socket.once('open', () => resolve(performance.now()));
      socket.once('error', reject);
    });
    const code = await new Promise<number>((resolve) => socket.once('close', resolve));
    const lastedMs = performance.now() - openedAt;
    // One ping unanswered, cut off at the next beat: no close handshake (1006 on this side).
    expect(code).toBe(1006);
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(lastedMs).toBeGreaterThan(HEARTBEAT_MS * 1.5);
    expect(lastedMs).toBeLessThan(HEARTBEAT_MS * 2 + 1000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.services.realtimeAdmission.snapshot().in_flight).toBe(0);
  });

  it('keeps a client that answers pings, across many beats', async () => {
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    let pings = 0;
    socket.socket.on('ping', () => (pings += 1));
    socket.send({ type: 'config', lang: 'en' });
    await socket.next('session.ready');
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS * 6));
    expect(pings).toBeGreaterThanOrEqual(4);
    expect(socket.closeCode).toBeNull();
    // Still a working session.
    socket.send({ type: 'audio.end' });
    await socket.next('session.complete');
    socket.close();
  });
});

describe('host_load', () => {
  it('refuses new sessions with 429 host_load while the event loop is late, and takes them again once it recovers', async () => {
    // Eight 150 ms stalls, 10 ms apart: whichever two-second window they fall in, its p99
    // event-loop delay is far over 100 ms.
    for (let stall = 0; stall < 8; stall++) {
      block(150);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    let refused: Awaited<ReturnType<typeof connect>> | null = null;
    const deadline = performance.now() + 5000;
    while (performance.now() < deadline) {
      const result = await connect(base, { headers: { 'X-API-Key': t.sandboxKey } });
      if (!(result instanceof TestSocket)) {
        refused = result;
        break;
      }
      result.socket.terminate();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (refused === null || refused instanceof TestSocket) throw new Error('no session was refused while the event loop stalled');
    expect(refused.status).toBe(429);
    expect(refused.headers['x-speech-capacity-reason']).toBe('host_load');
    expect(refused.headers['retry-after']).toBe('2');
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'stt.capacity', detail: expect.stringContaining('host_load') } });

    // A calm loop: within two windows, sessions are welcome again.
    let accepted: TestSocket | null = null;
    const recovery = performance.now() + 6000;
    while (performance.now() < recovery && accepted === null) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const result = await connect(base, { headers: { 'X-API-Key': t.sandboxKey } });
      if (result instanceof TestSocket) accepted = result;
    }
    expect(accepted).not.toBeNull();
    accepted!.close();
  }, 20_000);
});
