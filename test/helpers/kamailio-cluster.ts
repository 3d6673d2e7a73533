/**
 * Several gateway instances behind Kamailio, as docker/compose.cluster.yaml runs them, for the
 * cluster test and the cluster benchmark: `sprachrohr serve` processes (each with its own data
 * folder, dialplan folder, SIP port and RTP range; given a database URL, all on that one
 * PostgreSQL database), the shipped Kamailio configuration in front of them with the shipped
 * dispatcher list filled in, the SIPp caller that calls through it, and readers for what each
 * side logged about the calls.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe, type ServeProcess } from './cli.js';
import { eventuallyAsync } from './eventually.js';
import { startKamailioConfig, type KamailioRun } from './kamailio.js';
import { freePort } from './sipp.js';

/** The shipped Kamailio configuration and dispatcher list (`docker/kamailio/`). */
export const SHIPPED_KAMAILIO = fileURLToPath(new URL('../../docker/kamailio/', import.meta.url));

/**
 * A SIPp caller behind a proxy who hangs up after the call's length (`-d MS`): its ACK and BYE
 * carry the Record-Route of the 200 as their Route, so that they reach the instance that answered.
 */
export const PROXY_CALLER = fileURLToPath(new URL('../telephony/cluster/caller-hangs-up.xml', import.meta.url));

/** `talk`: the instance hangs up after a few seconds; `refer`: the instance transfers the caller by REFER; any other number: the caller hangs up. */
export const CLUSTER_DIALPLAN = [
  'name: cluster',
  'routes:',
  '  - number: talk',
  '    engines: synthetic',
  '    language: en',
  '    voice: jonas',
  '    steps:',
  '      - answer: {}',
  '      - say: { text: "This instance hangs up in a moment." }',
  '      - listen: { timeout_ms: 3000, max_ms: 4000 }',
  '      - hangup: { reason: the route hangs up }',
  '  - number: refer',
  '    engines: synthetic',
  '    language: en',
  '    voice: jonas',
  '    steps:',
  '      - answer: {}',
  '      - transfer: { to: "sip:+41441234567@192.0.2.10:5060", mode: refer, headers: { X-Transfer-Reason: queue 7 } }',
  '      - hangup: { reason: the transfer failed }',
  '  - number: "*"',
  '    engines: synthetic',
  '    language: en',
  '    voice: jonas',
  '    steps:',
  '      - answer: {}',
  '      - say: { text: "Hello, you reached one of several instances behind the proxy." }',
  '      - listen: { timeout_ms: 20000, max_ms: 25000 }',
  '      - hangup: { reason: nobody spoke }',
].join('\n');

/** The key secret the instances of one deployment share (on a database the start refuses without one). */
export const CLUSTER_KEY_SECRET = 'the-key-secret-every-instance-of-the-cluster-shares';

/** What makes instances share one store: the database's URL and the key secret. */
export function sharedStore(databaseUrl: string): Record<string, string> {
  return { SPRACHROHR_DATABASE_URL: databaseUrl, SPRACHROHR_KEY_SECRET: CLUSTER_KEY_SECRET };
}

/** A gateway instance: a `sprachrohr serve` process taking calls on `sipAddress`. */
export interface Instance {
  readonly name: string;
  /** `127.0.0.1:PORT`, its line in the dispatcher list. */
  readonly sipAddress: string;
  readonly rtpPorts: string;
  readonly serve: ServeProcess;
  /** Calls it logged as ended: Call-ID → the log line's `reason`. */
  endedCalls(): Map<string, string>;
  /** Its log lines with the message `msg`. */
  logged(msg: string): Array<Record<string, unknown>>;
  /** Neither killed nor exited. */
  alive(): boolean;
  /** kill -9, as a crash or a lost host ends it. */
  kill(): Promise<void>;
  /** SIGTERM (or nothing, if it has ended), then its folder removed. */
  stop(): Promise<void>;
}

/** How an instance runs besides its address and dialplan. */
export interface InstanceOptions {
  /** Variables added to its environment (those of {@link sharedStore} for a shared store). */
  readonly env?: Readonly<Record<string, string>>;
  /** Flags for its Node. */
  readonly nodeFlags?: readonly string[];
}

/** Starts an instance on SIP port `sipPort` with `dialplan` as its only dialplan. */
export async function startInstance(name: string, sipPort: number, rtpPorts: string, dialplan: string, options: InstanceOptions = {}): Promise<Instance> {
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
      ...options.env,
    },
    // Loading the modules is most of a start: on a busy two-core host two starts at once take long.
    45_000,
    options.nodeFlags,
  ).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  let ended = false;
  void serve.exited.then(() => (ended = true));
  return {
    name,
    sipAddress: `127.0.0.1:${sipPort}`,
    rtpPorts,
    serve,
    endedCalls: () => endedCalls(serve.output()),
    logged: (msg) => logEntries(serve.output(), msg),
    alive: () => !ended,
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

/** Two instances with Kamailio in front of them. */
export interface Cluster {
  readonly kamailio: KamailioRun;
  /** The instances in the dispatcher list's order (gateway_1, gateway_2); {@link Cluster.startAgain} replaces one. */
  readonly instances: Instance[];
  /**
   * Starts a new instance on the SIP address and RTP range of `instances[index]` (after it was
   * killed or drained), with `env` added to the cluster's; it takes that place in `instances`.
   * Resolves once it is up, not once Kamailio has probed it back in ({@link untilFlags}).
   */
  startAgain(index: number, env?: Readonly<Record<string, string>>): Promise<Instance>;
  /** Every instance started, replaced ones too (their logs stay readable). */
  readonly started: readonly Instance[];
  /** Stops Kamailio and every instance started. */
  stop(): Promise<void>;
}

/** What a cluster runs. */
export interface ClusterOptions {
  /** Each instance's RTP range, in the dispatcher list's order. */
  readonly rtpPorts: readonly [string, string];
  /** The instances' dialplan; {@link CLUSTER_DIALPLAN} unless given. */
  readonly dialplan?: string;
  /** What every instance runs with ({@link sharedStore} in its `env` for one database). */
  readonly instance?: InstanceOptions;
}

/** Starts two instances and Kamailio; resolves once Kamailio's probes have made both active. Stops what it started if any of it fails. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dialplan = options.dialplan ?? CLUSTER_DIALPLAN;
  const started: Instance[] = [];
  // An instance takes SIP over UDP and TCP on its port; two lookups may give one port twice.
  const ports = [await freePort('127.0.0.1', 't1')];
  while (ports.length < 2) {
    const port = await freePort('127.0.0.1', 't1');
    if (!ports.includes(port)) ports.push(port);
  }
  const settled = await Promise.allSettled(
    options.rtpPorts.map((range, index) => startInstance(`gateway-${index + 1}`, ports[index]!, range, dialplan, options.instance)),
  );
  for (const result of settled) if (result.status === 'fulfilled') started.push(result.value);
  let kamailio: KamailioRun | undefined;
  const stop = async (): Promise<void> => {
    await kamailio?.stop();
    await Promise.all(started.map((instance) => instance.stop()));
  };
  try {
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const instances = [...started];
    kamailio = await startDispatcher(instances);
    const run = kamailio;
    // Both instances answer Kamailio's probes before the first call.
    await eventuallyAsync(async () => [...(await destinationFlags(run)).values()].join() === 'AP,AP', 20_000, 'both instances active in Kamailio');
    return {
      kamailio: run,
      instances,
      started,
      startAgain: async (index, env = {}) => {
        const old = instances[index]!;
        const port = Number(old.sipAddress.split(':')[1]);
        const again = await startInstance(old.name, port, old.rtpPorts, dialplan, {
          ...options.instance,
          env: { ...options.instance?.env, ...env },
        });
        started.push(again);
        instances[index] = again;
        return again;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Waits until Kamailio's flags for `address` start with `state` (`A` active, `I` inactive). */
export function untilFlags(kamailio: KamailioRun, address: string, state: 'A' | 'I', ms: number, what: string): Promise<void> {
  return eventuallyAsync(async () => (await destinationFlags(kamailio)).get(address)?.startsWith(state) === true, ms, what);
}

/** The Call-IDs of one SIPp run (SIPp's are `NUMBER-PID@ADDRESS`). */
export function callsOfRun(pid: number | undefined, callIds: Iterable<string>): string[] {
  return [...callIds].filter((callId) => callId.includes(`-${pid}@`));
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

/** The calls whose ACK Kamailio relayed: answered, and the caller knows it. */
export function acknowledged(log: string): Set<string> {
  return new Set(
    inDialog(log)
      .filter((request) => request.method === 'ACK')
      .map((request) => request.callId),
  );
}

/** An INVITE an instance refused with 503 or did not answer in time: Kamailio's `failed INVITE` line. */
export interface FailedInvite {
  /** `HOST:PORT` of the instance. */
  readonly address: string;
  readonly callId: string;
  /** The reply code Kamailio logged (408 for its own timeout). */
  readonly status: number;
  /** When, in ms since the epoch (Kamailio's clock, which is the machine's). */
  readonly at: number;
}

/** Kamailio's `instance sip:<address> failed INVITE <Call-ID> with <code> at <s>.<µs>` lines, in the log's order. */
export function failedInvites(log: string): FailedInvite[] {
  return [...log.matchAll(/instance sip:(\S+) failed INVITE (\S+) with (\d+) at (\d+)\.(\d+)/g)].map(([, address, callId, status, seconds, micros]) => ({
    address: address!,
    callId: callId!,
    status: Number(status),
    at: epochMs(seconds!, micros!),
  }));
}

/**
 * When Kamailio first took `address` (`HOST:PORT`) out at or after `since` (ms since the epoch,
 * the time its log lines carry), or null: an INVITE it did not answer or refused with 503, or
 * the dispatcher's own verdict (`instance down`: the probed URI for a probe, the destination
 * for an INVITE). `by` says which of the two it was.
 */
export function markedDown(log: string, address: string, since = 0): { at: number; by: 'invite' | 'probe' } | null {
  const times: Array<{ at: number; by: 'invite' | 'probe' }> = failedInvites(log)
    .filter((failed) => failed.address === address)
    .map((failed) => ({ at: failed.at, by: 'invite' }));
  for (const [, method, requestUri, destination, seconds, micros] of log.matchAll(/instance down: (\S+) (\S+) \((\S+)\) at (\d+)\.(\d+)/g)) {
    const uri = method === 'OPTIONS' ? requestUri! : destination!;
    if (uri.replace(/^sip:([^@]*@)?/, '') === address) times.push({ at: epochMs(seconds!, micros!), by: method === 'OPTIONS' ? 'probe' : 'invite' });
  }
  const after = times.filter((time) => time.at >= since).sort((a, b) => a.at - b.at);
  return after[0] ?? null;
}

function epochMs(seconds: string, micros: string): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
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
