/**
 * A real PostgreSQL (Debian package `postgresql`) for the store tests: a fresh `initdb`
 * cluster in a temporary folder, listening on a free loopback TCP port (and a socket in that
 * folder), without fsync (a test cluster need not survive a power cut), stopped and removed
 * afterwards. PostgreSQL refuses to run as root, so as root the cluster belongs to the
 * `postgres` user the package creates.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './sipp.js';

/** The folder of the newest installed PostgreSQL's programs, or null. */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  const found = versions.map((version) => join(root, version, 'bin')).find((bin) => existsSync(join(bin, 'postgres')));
  return found ?? null;
}

/** The user and group a cluster runs as: ours, or `postgres` when we are root. */
function clusterOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const probe = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (probe.status !== 0 || group.status !== 0) return null;
  return { uid: Number(probe.stdout.trim()), gid: Number(group.stdout.trim()) };
}

/** Why PostgreSQL cannot run here, or null when it can (the tests that need it are skipped with this reason). */
export function postgresMissing(): string | null {
  if (!postgresBin()) return 'PostgreSQL is not installed: install the Debian package postgresql (npm run system-deps)';
  if (process.getuid?.() === 0 && !clusterOwner()) return 'running as root without a postgres user to own the test cluster (the postgresql package creates it)';
  return null;
}

/** A running test cluster. */
export interface PostgresRun {
  /** `postgres://sprachrohr@127.0.0.1:PORT/postgres`: the superuser on the default database. */
  readonly url: string;
  readonly port: number;
  /** Makes an empty database and answers its URL (one per test file keeps them apart). */
  createDatabase(name: string): Promise<string>;
  /** What the server logged so far. */
  log(): string;
  /** Stops the server at once (`kill -9` when `crash`) and removes the folder. */
  stop(crash?: boolean): Promise<void>;
  /**
   * Stops the server as a crash does (PostgreSQL's immediate shutdown: no checkpoint, the next
   * start recovers and empties the unlogged tables) and starts it again on the same port.
   */
  crashAndRestart(): Promise<void>;
}

/** Runs a program of the cluster's bin folder as the cluster's owner; rejects with its output on failure. */
function runAs(owner: { uid: number; gid: number } | null, program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} exited ${code}: ${output}`))));
  });
}

/** How the cluster runs. */
export interface PostgresOptions {
  /** Write to disk as a production database does (fsync, full pages): for benchmarks. Default off: tests need no durability. */
  readonly durable?: boolean;
}

/** Starts a fresh cluster; ready once it accepts a connection. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresRun> {
  const bin = postgresBin();
  if (!bin) throw new Error(postgresMissing() ?? 'PostgreSQL is not installed');
  const owner = clusterOwner();
  const dir = await mkdtemp(join(tmpdir(), 'postgres-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  await runAs(owner, join(bin, 'initdb'), ['-D', data, '-U', 'sprachrohr', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const port = await freePort('127.0.0.1', 't1');
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  if (!options.durable) args.push('-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off');
  let output = '';
  const launch = () => {
    const child: ChildProcess = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return { child, exited: new Promise<void>((resolve) => child.once('close', () => resolve())) };
  };
  let server = launch();
  const url = `postgres://sprachrohr@127.0.0.1:${port}/postgres`;
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const { child, exited } = server;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  // SIGINT is PostgreSQL's fast shutdown: sessions are ended, nothing waits for clients.
  const stop = async (crash = false): Promise<void> => {
    await halt(crash ? 'SIGKILL' : 'SIGINT');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await acceptsConnections(url, () => server.child.exitCode !== null);
  } catch (error) {
    await stop();
    throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${output}`);
  }
  return {
    url,
    port,
    createDatabase: async (name) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return `postgres://sprachrohr@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    log: () => output,
    stop,
    crashAndRestart: async () => {
      // SIGQUIT is the immediate shutdown.
      await halt('SIGQUIT');
      server = launch();
      await acceptsConnections(url, () => server.child.exitCode !== null);
    },
  };
}

/**
 * A pool for a test's own queries on `url`. Each of its connections ignores errors: the
 * server's shutdown at the end of a file ends the connections still closing (the pool's `end`
 * resolves before they have), and an error event nobody hears would fail the run.
 */
export function testPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  return pool;
}

/** Waits (up to 20 s) until a connection to `url` succeeds. */
async function acceptsConnections(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exited()) throw new Error('the server exited');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
