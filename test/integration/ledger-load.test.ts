/**
 * The ledger and the entitlements under a real load generator (autocannon) against a real
 * `sprachrohr serve`: an evaluation allowance running out mid-load serves what fits and refuses
 * the rest, with the ledger holding exactly the requests served; and after kill -9 mid-load and
 * a restart, the ledger holds every request that was answered 200 and nothing twice.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe } from '../helpers/cli.js';

let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-ledger-load-'));
  env = { SPRACHROHR_DATA_DIR: path.join(dir, 'data'), SPRACHROHR_LOG_LEVEL: 'info', SPRACHROHR_SIP: 'off', SPRACHROHR_EVALUATION_SECONDS: '10' };
});
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

const TEXT = JSON.stringify({ text: 'Grüezi mitenand.', format: 'pcm16' });

/** Runs autocannon against POST /v1/tts; every response's status, in order. */
function load(
  baseUrl: string,
  key: string,
  options: { amount?: number; duration?: number; connections: number },
  started?: (instance: autocannon.Instance) => void,
) {
  const statuses: number[] = [];
  return new Promise<number[]>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${baseUrl}/tts`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: TEXT,
        connections: options.connections,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.duration ?? 1 }),
        setupClient: (client) => client.on('response', (statusCode: number) => statuses.push(statusCode)),
      },
      (error) => (error ? reject(error) : resolve(statuses)),
    );
    started?.(instance);
  });
}

/** The ledger's lines of an account (`sprachrohr usage --csv`): date, environment, direction, mode, requests, audio seconds. */
async function ledger(account: string): Promise<Array<{ environment: string; requests: number; audioSeconds: number }>> {
  const result = await runCli(['usage', '--account', account, '--csv'], env);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
    .map((fields) => ({ environment: fields[1]!, requests: Number(fields[4]), audioSeconds: Number(fields[5]) }));
}

describe('the ledger under load', () => {
  it('serves what an evaluation allowance holds and refuses the rest; the ledger holds exactly what was served', async () => {
    await runCli(['accounts', 'create', 'loadco'], env);
    const key = JSON.parse((await runCli(['keys', 'create', '--name', 'load', '--env', 'live', '--account', 'loadco', '--json'], env)).stdout).key as string;
    const server = await startServe(env);
    let statuses: number[];
    try {
      // One request is the same 1.2 s of speech each time; 20 stay under the burst of 25 a second.
      const probe = await fetch(`${server.baseUrl}/tts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: TEXT });
      expect(probe.status).toBe(200);
      const seconds = Number(probe.headers.get('x-speech-audio-duration'));
      statuses = await load(server.baseUrl, key, { amount: 19, connections: 4 });
      const served = statuses.filter((status) => status === 200).length + 1;
      expect(statuses).toHaveLength(19);
      expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
      // What fits: whole requests while the allowance lasts. Four at a time may each hold part of
      // the last seconds and be cut, so up to three fewer than fit in sequence.
      const fit = Math.floor(10 / seconds);
      expect(served).toBeLessThanOrEqual(fit);
      expect(served).toBeGreaterThanOrEqual(fit - 3);
      const refused = await fetch(`${server.baseUrl}/tts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: TEXT });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('tts.entitlement_exhausted');
      const [live] = await ledger('loadco');
      expect(live).toMatchObject({ environment: 'live', requests: served });
      expect(live!.audioSeconds).toBeCloseTo(served * seconds, 2);
      expect(live!.audioSeconds).toBeLessThanOrEqual(10);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);

  it('keeps every answered request after kill -9 mid-load, once, and serves on after a restart', async () => {
    const key = JSON.parse((await runCli(['keys', 'create', '--name', 'crash', '--json'], env)).stdout).key as string;
    const server = await startServe(env);
    let answered = 0;
    const statuses = await load(server.baseUrl, key, { duration: 3, connections: 8 }, (instance) => {
      setTimeout(() => {
        server.child.kill('SIGKILL');
        setTimeout(() => instance.stop(), 300);
      }, 1200);
    });
    await server.exited;
    answered = statuses.filter((status) => status === 200).length;
    expect(answered).toBeGreaterThan(10);
    const restarted = await startServe(env);
    try {
      const sandbox = (await ledger('default')).filter((line) => line.environment === 'sandbox');
      const recorded = sandbox.reduce((sum, line) => sum + line.requests, 0);
      // Every 200 was recorded before it was sent; at most the eight in flight when the process
      // died were recorded without their answer arriving.
      expect(recorded).toBeGreaterThanOrEqual(answered);
      expect(recorded).toBeLessThanOrEqual(answered + 8);
      const after = await fetch(`${restarted.baseUrl}/tts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: TEXT });
      expect(after.status).toBe(200);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  }, 120_000);
});
