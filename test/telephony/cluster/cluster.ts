/**
 * The parts of the cluster test: sprachrohr instances run as `sprachrohr serve` processes
 * (each with its own data folder, dialplan folder, SIP port and RTP range), the shipped
 * Kamailio configuration in front of them with the shipped dispatcher list filled in, and
 * readers for what each side logged about the calls.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe, type ServeProcess } from '../../helpers/cli.js';
import { startKamailioConfig, type KamailioRun } from '../../helpers/kamailio.js';

/** The shipped Kamailio configuration and dispatcher list (`docker/kamailio/`). */
export const SHIPPED_KAMAILIO = fileURLToPath(new URL('../../../docker/kamailio/', import.meta.url));

/** A gateway instance: a `sprachrohr serve` process taking calls on `sipAddress`. */
export interface Instance {
  readonly name: string;
  /** `127.0.0.1:PORT`, its line in the dispatcher list. */
  readonly sipAddress: string;
  readonly serve: ServeProcess;
  /** Calls it logged as ended: Call-ID → the log line's `reason`. */
  endedCalls(): Map<string, string>;
  /** Its log lines with the message `msg`. */
  logged(msg: string): Array<Record<string, unknown>>;
  /** kill -9, as a crash or a lost host ends it. */
  kill(): Promise<void>;
  /** SIGTERM (or nothing, if it was killed), then its folder removed. */
  stop(): Promise<void>;
}

/** Starts an instance on SIP port `sipPort` with `dialplan` as its only dialplan; `env` adds variables. */
export async function startInstance(
  name: string,
  sipPort: number,
  rtpPorts: string,
  dialplan: string,
  env: Readonly<Record<string, string>> = {},
): Promise<Instance> {
  const dir = await mkdtemp(join(tmpdir(), `cluster-${name}-`));
  await mkdir(join(dir, 'dialplans'));
  await writeFile(join(dir, 'dialplans', 'cluster.yaml'), dialplan);
  const serve = await startServe(
    {
      SPRACHROHR_DATA_DIR: join(dir, 'data'),
      SPRACHROHR_DIALPLANS_DIR: join(dir, 'dialplans'),
      SPRACHROHR_SIP_PORT: String(sipPort),
      SPRACHROHR_RTP_PORTS: rtpPorts,
      // What the instance writes into its SDP: callers send RTP straight to it, not via Kamailio.
      SPRACHROHR_SIP_ADVERTISED_ADDRESS: '127.0.0.1',
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_LOG_LEVEL: 'info',
      ...env,
      // Loading the modules is most of a start: on a busy two-core host two starts at once take long.
    },
    45_000,
  ).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  let ended = false;
  void serve.exited.then(() => (ended = true));
  return {
    name,
    sipAddress: `127.0.0.1:${sipPort}`,
    serve,
    endedCalls: () => endedCalls(serve.output()),
    logged: (msg) => logEntries(serve.output(), msg),
    kill: async () => {
      serve.child.kill('SIGKILL');
      await serve.exited;
    },
    stop: async () => {
      if (!ended) {
        serve.child.kill('SIGTERM');
        const timer = setTimeout(() => serve.child.kill('SIGKILL'), 5000);
        await serve.exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The `call ended` lines of an instance's JSON log: Call-ID → reason. */
export function endedCalls(log: string): Map<string, string> {
  return new Map(logEntries(log, 'call ended').map((entry) => [String(entry['callId']), String(entry['reason'])]));
}

/** The lines of an instance's JSON log with the message `msg`. */
export function logEntries(log: string, msg: string): Array<Record<string, unknown>> {
  return log
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Starts the shipped Kamailio configuration with the shipped dispatcher list, its
 * placeholders filled with the instances' addresses, its RPC socket in its folder.
 */
export async function startDispatcher(instances: readonly Instance[]): Promise<KamailioRun> {
  let list = await readFile(join(SHIPPED_KAMAILIO, 'dispatcher.list'), 'utf8');
  instances.forEach((instance, index) => (list = list.replaceAll(`{{gateway_${index + 1}}}`, instance.sipAddress)));
  return startKamailioConfig(
    join(SHIPPED_KAMAILIO, 'kamailio.cfg'),
    {},
    {
      files: { 'dispatcher.list': list },
      defines: { DISPATCHER_LIST: '"{{dir}}/dispatcher.list"', CTL_SOCKET: '"unix:{{dir}}/kamailio_ctl"' },
    },
  );
}

/** Kamailio's log lines `dispatch INVITE <Call-ID> to sip:<address>`: Call-ID → address. */
export function dispatched(log: string): Map<string, string> {
  return matches(log, /dispatch INVITE (\S+) to sip:(\S+)/g);
}

/** Kamailio's `failover INVITE <Call-ID> to sip:<address>` lines: Call-ID → the address it went on to. */
export function failedOver(log: string): Map<string, string> {
  return matches(log, /failover INVITE (\S+) to sip:(\S+)/g);
}

/** Where each INVITE finally went: the last instance it failed over to, or where it was dispatched. */
export function finalDestinations(log: string): Map<string, string> {
  return new Map([...dispatched(log), ...failedOver(log)]);
}

/** In-dialog requests Kamailio relayed: `<method> <Call-ID> from <source> to <Request-URI>`. */
export function inDialog(log: string): Array<{ method: string; callId: string; from: string; to: string }> {
  return [...log.matchAll(/in-dialog (\S+) (\S+) from (\S+) to (\S+)/g)].map(([, method, callId, from, to]) => ({
    method: method!,
    callId: callId!,
    from: from!,
    to: to!,
  }));
}

/**
 * When Kamailio first took `address` (`HOST:PORT`) out, in ms since the epoch (the time its
 * log lines carry), or null: an INVITE it did not answer or refused with 503, or the
 * dispatcher's own verdict (`instance down`: the probed URI for a probe, the destination for
 * an INVITE).
 */
export function markedDownAt(log: string, address: string): number | null {
  const times: number[] = [];
  const at = (seconds: string, micros: string) => Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  for (const [, failed, seconds, micros] of log.matchAll(/instance sip:(\S+) failed INVITE \S+ with \d+ at (\d+)\.(\d+)/g))
    if (failed === address) times.push(at(seconds!, micros!));
  for (const [, method, requestUri, destination, seconds, micros] of log.matchAll(/instance down: (\S+) (\S+) \((\S+)\) at (\d+)\.(\d+)/g)) {
    const uri = method === 'OPTIONS' ? requestUri! : destination!;
    if (uri.replace(/^sip:([^@]*@)?/, '') === address) times.push(at(seconds!, micros!));
  }
  return times.length ? Math.min(...times) : null;
}

/** `kamcmd dispatcher.list` on the run's RPC socket: each destination's address → its flags (`AP`, `IP`, ...). */
export async function destinationFlags(kamailio: KamailioRun): Promise<Map<string, string>> {
  const text = await new Promise<string>((resolve, reject) =>
    execFile('kamcmd', ['-s', `unix:${kamailio.dir}/kamailio_ctl`, 'dispatcher.list'], { timeout: 5000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );
  return matches(text, /URI: sip:(\S+)\s+FLAGS: (\S+)/g);
}

function matches(text: string, pattern: RegExp): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of text.matchAll(pattern)) found.set(match[1]!, match[2]!);
  return found;
}
