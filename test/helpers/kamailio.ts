/**
 * Kamailio (Debian package `kamailio`) as a real carrier for the trunk tests: a configuration
 * of `test/integration/kamailio/` with its `{{placeholders}}` filled in, run in the foreground
 * in a temporary folder on a free loopback UDP port, ready once it answers OPTIONS, and
 * stopped with its log kept for the test to read.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './sipp.js';

/** The Kamailio command. */
export const KAMAILIO = process.env['KAMAILIO_BIN'] ?? (existsSync('/usr/sbin/kamailio') ? '/usr/sbin/kamailio' : 'kamailio');

/** Why Kamailio cannot run here, or null when it can (the tests that need it are skipped with this reason). */
export function kamailioMissing(): string | null {
  const probe = spawnSync(KAMAILIO, ['-v'], { encoding: 'utf8' });
  if (probe.error) return `Kamailio (${KAMAILIO}) is not installed: install the Debian package kamailio (npm run system-deps)`;
  return /kamailio 5\./.test(probe.stdout) ? null : `Kamailio (${KAMAILIO}) did not report a 5.x version: ${probe.stdout.slice(0, 100)}`;
}

/** A running Kamailio. */
export interface KamailioRun {
  /** `127.0.0.1:PORT`. */
  readonly address: string;
  readonly port: number;
  /** What it logged so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Starts the configuration `name` of `test/integration/kamailio/` with `values` for its placeholders. */
export async function startKamailio(name: string, values: Readonly<Record<string, string>>): Promise<KamailioRun> {
  const dir = await mkdtemp(join(tmpdir(), 'kamailio-'));
  let text = await readFile(fileURLToPath(new URL(`../integration/kamailio/${name}`, import.meta.url)), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  const config = join(dir, 'kamailio.cfg');
  await writeFile(config, text);
  const port = await freePort();
  const args = ['-f', config, '-DD', '-E', '-l', `udp:127.0.0.1:${port}`, '-w', dir, '-Y', dir, '-P', join(dir, 'kamailio.pid'), '-m', '32', '-M', '4'];
  const child = spawn(KAMAILIO, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await answersOptions(port, () => child.exitCode !== null);
  } catch (error) {
    await stop();
    throw new Error(`Kamailio did not start (${KAMAILIO} ${args.join(' ')}): ${(error as Error).message}\n${output.slice(-2000)}`);
  }
  return { address: `127.0.0.1:${port}`, port, log: () => output, stop };
}

/** Sends OPTIONS every 100 ms until Kamailio answers (5 s at most). */
async function answersOptions(port: number, ended: () => boolean): Promise<void> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const own = socket.address().port;
  const answered = new Promise<void>((resolve) => socket.once('message', () => resolve()));
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      if (ended()) throw new Error('it exited');
      const options = [
        `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${own};branch=z9hG4bK-ready-${attempt}`,
        'Max-Forwards: 70',
        `From: <sip:probe@127.0.0.1:${own}>;tag=ready`,
        `To: <sip:127.0.0.1:${port}>`,
        'Call-ID: kamailio-ready',
        `CSeq: ${attempt + 1} OPTIONS`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      socket.send(options, port, '127.0.0.1');
      const ready = await Promise.race([answered.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 100))]);
      if (ready) return;
    }
    throw new Error('no answer to OPTIONS within 5 s');
  } finally {
    socket.close();
  }
}
