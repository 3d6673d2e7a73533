/**
 * Kamailio (Debian package `kamailio`) as a real carrier for the trunk tests, and as the proxy
 * in front of several gateways for the cluster test: a configuration (one of
 * `test/integration/kamailio/`, or a shipped one such as `docker/kamailio/kamailio.cfg`) with
 * its `{{placeholders}}` filled in, run in the foreground in a temporary folder on a free
 * loopback UDP port (and, when asked, a TLS port), ready once it answers OPTIONS, and stopped
 * with its log kept for the test to read.
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

/** The tls module of Debian's kamailio-tls-modules. */
export const KAMAILIO_TLS_MODULE = process.env['KAMAILIO_TLS_MODULE'] ?? '/usr/lib/x86_64-linux-gnu/kamailio/modules/tls.so';

/** Why Kamailio cannot take SIP over TLS here, or null when it can. */
export function kamailioTlsMissing(): string | null {
  return (
    kamailioMissing() ??
    (existsSync(KAMAILIO_TLS_MODULE)
      ? null
      : `Kamailio's tls module (${KAMAILIO_TLS_MODULE}) is not installed: install the Debian package kamailio-tls-modules (npm run system-deps)`)
  );
}

/** A running Kamailio. */
export interface KamailioRun {
  /** `127.0.0.1:PORT`. */
  readonly address: string;
  readonly port: number;
  /** Its TLS port, when it was started with one ({@link KamailioExtras.tls}); else null. */
  readonly tlsPort: number | null;
  /** Its temporary folder (configuration, the files given to it, its RPC socket if it has one). */
  readonly dir: string;
  /** What it logged so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Starts the configuration `name` of `test/integration/kamailio/` with `values` for its placeholders. */
export function startKamailio(name: string, values: Readonly<Record<string, string>>, extras: KamailioExtras = {}): Promise<KamailioRun> {
  return startKamailioConfig(fileURLToPath(new URL(`../integration/kamailio/${name}`, import.meta.url)), values, extras);
}

/** More of a run than its configuration. */
export interface KamailioExtras {
  /** Files written into the run's folder beside the configuration, by name, placeholders filled in. */
  readonly files?: Readonly<Record<string, string>>;
  /** Preprocessor defines (`-A NAME=value`), placeholders filled in; a string value needs its own quotes. */
  readonly defines?: Readonly<Record<string, string>>;
  /**
   * Also listen for SIP over TLS on a free loopback port (the configuration loads the tls
   * module; see {@link kamailioTlsMissing}).
   */
  readonly tls?: boolean;
}

/**
 * Starts the configuration file `config` with `values` for its placeholders; `{{dir}}` is the
 * run's folder wherever placeholders are filled (configuration, `files`, `defines`).
 */
export async function startKamailioConfig(config: string, values: Readonly<Record<string, string>>, extras: KamailioExtras = {}): Promise<KamailioRun> {
  const dir = await mkdtemp(join(tmpdir(), 'kamailio-'));
  const fill = (text: string): string => {
    for (const [key, value] of Object.entries({ ...values, dir })) text = text.replaceAll(`{{${key}}}`, value);
    return text;
  };
  const configFile = join(dir, 'kamailio.cfg');
  await writeFile(configFile, fill(await readFile(config, 'utf8')));
  for (const [name, text] of Object.entries(extras.files ?? {})) await writeFile(join(dir, name), fill(text));
  const port = await freePort();
  const tlsPort = extras.tls ? await freePort('127.0.0.1', 't1') : null;
  const defines = Object.entries(extras.defines ?? {}).flatMap(([name, value]) => ['-A', `${name}=${fill(value)}`]);
  const args = [
    '-f',
    configFile,
    ...defines,
    '-DD',
    '-E',
    '-l',
    `udp:127.0.0.1:${port}`,
    ...(tlsPort === null ? [] : ['-l', `tls:127.0.0.1:${tlsPort}`]),
    '-w',
    dir,
    '-Y',
    dir,
    '-P',
    join(dir, 'kamailio.pid'),
    '-m',
    '32',
    '-M',
    '4',
  ];
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
  return { address: `127.0.0.1:${port}`, port, tlsPort, dir, log: () => output, stop };
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
