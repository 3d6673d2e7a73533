/**
 * Two `sprachrohr serve` processes on one PostgreSQL database, as a deployment of identical
 * instances runs: keys made with the CLI against the database work on both instances (each
 * with a fresh, empty data folder), what both metered is in one ledger, a key revoked once is
 * refused by both, a job's result is served by either, one key's request rate and sessions are
 * counted once for both, an instance that kept files in its data folder (the embedded store's
 * way) moves them into the database at start, and `sprachrohr db` migrates and reports the schema. Also what a bad or
 * unreachable database URL gives: the configuration error or the store's, never a stack.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres-migrations.js';
import { PostgresStore } from '../../../src/store/postgres-store.js';
import { runCliInProcess, startServe, type ServeProcess } from '../../helpers/cli.js';
import { postgresMissing, startPostgres, type PostgresRun } from '../../helpers/postgres.js';
import { connect, opened, TestSocket, type RefusedUpgrade } from '../../helpers/ws-client.js';

const missing = postgresMissing();
const SECRET = 'a-shared-key-secret-of-at-least-32-characters';

describe.skipIf(missing)('instances sharing one PostgreSQL database', () => {
  let server: PostgresRun;
  let dir = '';
  let env: Record<string, string> = {};
  const instances: ServeProcess[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-shared-'));
    env = {
      SPRACHROHR_DATABASE_URL: await server.createDatabase('deployment'),
      SPRACHROHR_KEY_SECRET: SECRET,
      SPRACHROHR_DATA_DIR: path.join(dir, 'cli-data'),
      SPRACHROHR_SIP: 'off',
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_LOG_LEVEL: 'info',
    };
  }, 60_000);

  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await server?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('migrates with `sprachrohr db migrate` once, and `db status` says so', async () => {
    const before = await runCliInProcess(['db', 'status'], env);
    expect(before.stdout).toMatch(
      new RegExp(`schema version 0, this release ${POSTGRES_MIGRATIONS.length}: ${POSTGRES_MIGRATIONS.length} migration\\(s\\) to apply`),
    );
    expect(before.stdout).not.toContain(SECRET);
    const migrated = await runCliInProcess(['db', 'migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout.split('\n').filter((line) => line.startsWith('applied '))).toHaveLength(POSTGRES_MIGRATIONS.length);
    const again = await runCliInProcess(['db', 'migrate'], env);
    expect(again.stdout).toMatch(/nothing to apply/);
    expect((await runCliInProcess(['db', 'status'], env)).stdout).toMatch(/: up to date\n$/);
  });

  it('serves keys made elsewhere from fresh instances, meters both into one ledger, and revokes on both', async () => {
    const created = await runCliInProcess(['keys', 'create', '--name', 'shared', '--env', 'sandbox', '--json'], env);
    expect(created.code).toBe(0);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    const started = await Promise.all(['a', 'b'].map((name) => startServe({ ...env, SPRACHROHR_DATA_DIR: path.join(dir, `instance-${name}`) })));
    instances.push(...started);
    const synthesise = (instance: ServeProcess) =>
      fetch(`${instance.baseUrl}/tts`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: 'Grüezi mitenand', language: 'de-CH', format: 'pcm16', sample_rate_hz: 16000 }),
      });
    for (const instance of instances) {
      const response = await synthesise(instance);
      expect(response.status, await response.clone().text()).toBe(200);
    }
    // Nothing of the store is in an instance's data folder.
    for (const name of ['a', 'b']) {
      const files = await fs.readdir(path.join(dir, `instance-${name}`)).catch(() => []);
      expect(files.filter((file) => file.startsWith('sprachrohr.sqlite') || file === 'key-secret')).toEqual([]);
    }
    const usage = await runCliInProcess(['usage', '--account', 'default', '--csv'], env);
    const sandboxLines = usage.stdout.split('\n').filter((line) => line.includes(',sandbox,tts,batch,'));
    expect(sandboxLines).toHaveLength(1);
    expect(sandboxLines[0]!.split(',')[4]).toBe('2');
    expect((await runCliInProcess(['keys', 'revoke', id], env)).code).toBe(0);
    // A revoked key is known but refused: 403 on both (no instance kept it in a cache).
    for (const instance of instances) expect((await synthesise(instance)).status).toBe(403);
  }, 90_000);

  it("serves a job's result from either instance: the bytes are in the database, not a data folder", async () => {
    expect(instances).toHaveLength(2);
    const created = await runCliInProcess(['keys', 'create', '--name', 'jobs', '--env', 'sandbox', '--json'], env);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const [a, b] = instances as [ServeProcess, ServeProcess];
    const submitted = await fetch(`${a.baseUrl}/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'tts', text: 'Grüezi mitenand', language: 'de-CH', format: 'wav' }),
    });
    expect(submitted.status, await submitted.clone().text()).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    let status = '';
    for (let attempt = 0; attempt < 100 && status !== 'succeeded'; attempt++) {
      const job = (await (await fetch(`${b.baseUrl}/jobs/${id}`, { headers: { 'X-API-Key': key } })).json()) as { status: string };
      status = job.status;
      if (status === 'failed') throw new Error(`the job failed: ${JSON.stringify(job)}`);
      if (status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe('succeeded');
    const audio = await Promise.all(
      instances.map(async (instance) => {
        const response = await fetch(`${instance.baseUrl}/jobs/${id}/audio`, { headers: { 'X-API-Key': key } });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^audio\/wav/);
        return Buffer.from(await response.arrayBuffer());
      }),
    );
    expect(audio[0]!.length).toBeGreaterThan(1000);
    expect(audio[1]).toEqual(audio[0]);
    for (const name of ['a', 'b']) expect(await fs.readdir(path.join(dir, `instance-${name}`, 'jobs')).catch(() => [])).toEqual([]);
  }, 60_000);

  it('moves the files a data folder kept with the embedded store into the database at start', async () => {
    const dataDir = path.join(dir, 'instance-moved');
    await fs.mkdir(path.join(dataDir, 'recordings'), { recursive: true });
    await fs.mkdir(path.join(dataDir, 'jobs'), { recursive: true });
    const voicemail = Buffer.from('RIFF a voicemail kept before');
    const result = Buffer.from('a job result kept before');
    await fs.writeFile(path.join(dataDir, 'recordings', 'rec_moved.wav'), voicemail);
    await fs.writeFile(path.join(dataDir, 'jobs', 'job_moved.result'), result);
    // A write that was cut off is no file to move.
    await fs.writeFile(path.join(dataDir, 'jobs', 'job_cut.result.partial-0a1b2c'), 'half');
    const moved = await startServe({ ...env, SPRACHROHR_DATA_DIR: dataDir });
    const store = await PostgresStore.open(env['SPRACHROHR_DATABASE_URL']!);
    try {
      expect(await store.blobs('recordings').get('rec_moved.wav')).toEqual(voicemail);
      expect(await store.blobs('jobs').get('job_moved.result')).toEqual(result);
      expect(await store.blobs('jobs').get('job_cut.result')).toBeNull();
    } finally {
      await store.close();
      moved.child.kill('SIGKILL');
      await moved.exited;
    }
    expect(await fs.readdir(path.join(dataDir, 'recordings'))).toEqual([]);
    expect(await fs.readdir(path.join(dataDir, 'jobs'))).toEqual(['job_cut.result.partial-0a1b2c']);
    expect(moved.output()).toMatch(/moved 1 recordings files from the data folder into the database/);
  }, 60_000);

  it('holds one key to one request rate and one session ceiling across both instances', async () => {
    expect(instances).toHaveLength(2);
    const created = await runCliInProcess(['keys', 'create', '--name', 'limits', '--env', 'sandbox', '--json'], env);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const [a, b] = instances as [ServeProcess, ServeProcess];
    // A burst of 25, refilled at 10 a second: two clients, one per instance, 30 requests each.
    const startedAt = performance.now();
    const answers = await Promise.all(
      [a, b].map(async (instance) => {
        const statuses: number[] = [];
        for (let n = 0; n < 30; n++) {
          const response = await fetch(`${instance.baseUrl}/tts/voices`, { headers: { 'X-API-Key': key } });
          if (response.status === 429) expect(((await response.json()) as { error: { code: string } }).error.code).toBe('tts.rate_limited');
          else await response.arrayBuffer();
          statuses.push(response.status);
        }
        return statuses;
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const allowed = answers.flat().filter((status) => status === 200).length;
    expect(answers.flat().every((status) => status === 200 || status === 429)).toBe(true);
    // One bucket for both: what one instance would allow, not twice that.
    expect(allowed).toBeGreaterThanOrEqual(25);
    expect(allowed, `${allowed} allowed in ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(25 + Math.ceil(10 * seconds));
    // Ten realtime sessions at once per sandbox key: six open on one instance, four on the other, the eleventh refused.
    await new Promise((resolve) => setTimeout(resolve, 2600));
    const url = (instance: ServeProcess) => `${instance.baseUrl.replace(/^http/, 'ws')}/stt/stream`;
    const sockets: TestSocket[] = [];
    try {
      for (const instance of [a, a, a, a, a, a, b, b, b, b]) sockets.push(opened(await connect(url(instance), { headers: { 'X-API-Key': key } })));
      for (const instance of [a, b]) {
        const refused = await connect(url(instance), { headers: { 'X-API-Key': key } });
        expect(refused).not.toBeInstanceOf(TestSocket);
        expect((refused as RefusedUpgrade).status).toBe(429);
        expect(JSON.parse((refused as RefusedUpgrade).body).error).toMatchObject({ code: 'stt.capacity', detail: 'key_capacity' });
      }
      // A session that ends gives its place back, to either instance.
      sockets.shift()!.close();
      let reopened: TestSocket | RefusedUpgrade | null = null;
      for (let attempt = 0; attempt < 50 && !(reopened instanceof TestSocket); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        reopened = await connect(url(b), { headers: { 'X-API-Key': key } });
      }
      expect(reopened).toBeInstanceOf(TestSocket);
      sockets.push(reopened as TestSocket);
    } finally {
      for (const socket of sockets) socket.close();
    }
  }, 60_000);

  it('says what is wrong with a bad database URL, or an unreachable database, without a stack', async () => {
    const bad = await runCliInProcess(['keys', 'list'], { ...env, SPRACHROHR_DATABASE_URL: 'mysql://u:p@h/d' });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/SPRACHROHR_DATABASE_URL.*postgres:\/\//);
    const noSecret = await runCliInProcess(['keys', 'list'], { ...env, SPRACHROHR_KEY_SECRET: '' });
    expect(noSecret.code).toBe(78);
    expect(noSecret.stderr).toMatch(/SPRACHROHR_KEY_SECRET: must be set when SPRACHROHR_DATABASE_URL is/);
    const down = await runCliInProcess(['keys', 'list'], {
      ...env,
      SPRACHROHR_DATABASE_URL: `postgres://sprachrohr:hunter2@127.0.0.1:${server.port + 1}/deployment`,
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /^sprachrohr: the store cannot be used: PostgreSQL at postgres:\/\/sprachrohr:\*\*\*@127\.0\.0\.1:\d+\/deployment: .*ECONNREFUSED/,
    );
    expect(down.stderr).not.toContain('hunter2');
    expect(down.stderr).not.toMatch(/\n\s+at /);
  });
});
