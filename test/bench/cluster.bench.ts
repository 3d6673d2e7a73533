/**
 * Two `sprachrohr serve` instances behind Kamailio on one PostgreSQL database, as
 * docker/compose.cluster.yaml runs them, all on this machine's loopback: the shipped
 * docker/kamailio/ configuration with its dispatcher list filled in (test/helpers/
 * kamailio-cluster.ts, as the cluster test runs it), PostgreSQL from Debian in a cluster of its
 * own (fsync on, as a production database runs), the instances from dist/ with
 * `--single-threaded-gc` as the `sprachrohr` command runs them, on synthetic engines, and SIPp as
 * the callers. Each call: INVITE through Kamailio, the route answers and speaks, the caller
 * hangs up CLUSTER_BENCH_HOLD_MS (1000) after the 200, its ACK and BYE through Kamailio.
 *
 * - Admission: SIPp places calls at each rate of CLUSTER_BENCH_RATES (10,20,40,80,160 a second)
 *   for CLUSTER_BENCH_STEP_SECONDS (15) each. Per step: the calls attempted, answered (a 200 for
 *   the INVITE), failed (SIPp's count: no 200, or the BYE not answered 200), failed over by
 *   Kamailio (an instance that did not answer within fr_timer, or answered 503), how each
 *   instance's share came out, the rate SIPp kept (from the times of its INVITEs), INVITE → 200
 *   at SIPp, the CPU the instances, Kamailio and the whole machine used, and how many of the
 *   calls that went through have their entry in the one ledger (each instance writes a call's
 *   when it ends); then the highest rate with none failed.
 * - Failover: calls at CLUSTER_BENCH_FAILOVER_RATE (20) a second; 4 s in, one instance is killed
 *   with kill -9 and the calls go on 8 s more. From the kill: the last new INVITE Kamailio sent
 *   to the dead instance (timed when SIPp sent it: Kamailio logs no time for a dispatch, and
 *   forwards at once) and the first INVITE it failed over from it (Kamailio's own time in its
 *   failure route); the new calls that failed, and the calls that were up or being set up on
 *   the dead instance (lost). The killed instance is started again on its address and probed
 *   back in; CLUSTER_BENCH_FAILOVER_RUNS (3) times, killing the instances in turn.
 * - Then what the instances logged at warn level and above.
 *
 * Everything it starts is stopped at the end, also when it fails or is interrupted.
 * Run: npm run bench:cluster (builds first; the instances are the built CLI)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import pg from 'pg';
import {
  callsOfRun,
  dispatched,
  failedInvites,
  failedOver,
  finalDestinations,
  markedDown,
  PROXY_CALLER,
  sharedStore,
  startCluster,
  untilFlags,
  type Cluster,
} from '../helpers/kamailio-cluster.js';
import { KAMAILIO } from '../helpers/kamailio.js';
import { startPostgres, type PostgresRun } from '../helpers/postgres.js';
import { removeSippRuns, startSipp, type SippResult, type SippRun } from '../helpers/sipp.js';
import { sleep, summary, type Summary } from './calls/common.js';
import { cpuSeconds } from './calls/usage.js';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const RATES = (process.env['CLUSTER_BENCH_RATES'] ?? '10,20,40,80,160').split(',').map(Number);
const STEP_SECONDS = setting('CLUSTER_BENCH_STEP_SECONDS', 15);
const HOLD_MS = setting('CLUSTER_BENCH_HOLD_MS', 1000);
const FAILOVER_RATE = setting('CLUSTER_BENCH_FAILOVER_RATE', 20);
const FAILOVER_RUNS = setting('CLUSTER_BENCH_FAILOVER_RUNS', 3);
const BEFORE_KILL_MS = 4000;
const AFTER_KILL_MS = 8000;
/** Outside the kernel's ephemeral ports (32768 up) and the ranges the tests use: up to 500 calls each. */
const RTP_PORTS = ['26000-26999', '27000-27999'] as const;

// ---------------------------------------------------------------- what SIPp logged

/** One call as SIPp's message log (`-trace_msg`) shows it; times in ms since the epoch. */
interface CallTrace {
  /** When SIPp first sent the INVITE. */
  readonly invitedAt: number;
  /** The first final response to the INVITE, and when it came. */
  final: { readonly status: number; readonly at: number } | null;
  /** The BYE was answered 200: the call went through to its end. */
  completed: boolean;
}

/** SIPp's time stamp, `2026-12-01 21:03:37.040957` in local time, as ms since the epoch. */
function sippTime(stamp: string): number {
  const [date, time] = stamp.split(' ') as [string, string];
  const [seconds, fraction = '0'] = time.split('.') as [string, string?];
  // Without an offset, the date-time form is local time, as SIPp writes it.
  return Date.parse(`${date}T${seconds}`) + Number(`0.${fraction}`) * 1000;
}

/** The calls of one SIPp run by Call-ID, read from its message log. */
function sippCalls(messages: string): Map<string, CallTrace> {
  const calls = new Map<string, CallTrace>();
  for (const block of messages.split(/^-{20,} /m).slice(1)) {
    const at = sippTime(block.slice(0, block.indexOf('\n')).trim());
    const callId = /^Call-ID:\s*(\S+)/im.exec(block)?.[1];
    const method = /^CSeq:\s*\d+ (\w+)/im.exec(block)?.[1];
    if (!callId || !method) continue;
    const sent = /^\S+ message sent/m.test(block);
    const status = /^SIP\/2\.0 (\d{3})/m.exec(block);
    const call = calls.get(callId);
    if (sent && !status && method === 'INVITE' && !call) calls.set(callId, { invitedAt: at, final: null, completed: false });
    else if (!sent && status && call && method === 'INVITE' && Number(status[1]) >= 200) call.final ??= { status: Number(status[1]), at };
    else if (!sent && status && call && method === 'BYE' && status[1] === '200') call.completed = true;
  }
  return calls;
}

// ---------------------------------------------------------------- CPU

/** Kamailio's processes: the main one (its pid file) and the children it forked. */
function kamailioPids(dir: string): number[] {
  const main = Number(readFileSync(`${dir}/kamailio.pid`, 'utf8').trim());
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === main;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [main, ...children];
}

/** The machine's CPU time so far, busy and in all, in clock ticks (the `cpu` line of /proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  // idle and iowait
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** CPU used over a window, in cores (1.00: one core busy all the time). */
interface CpuFigures {
  readonly instances: number;
  readonly kamailio: number;
  /** The whole machine, other work included, as a share of all its cores. */
  readonly machineBusy: number;
}

/** Starts measuring the CPU of the instances and Kamailio; the returned function ends the window. */
async function cpuWindow(cluster: Cluster): Promise<() => Promise<CpuFigures>> {
  const pids = cluster.instances.map((instance) => instance.serve.child.pid);
  const kamailio = kamailioPids(cluster.kamailio.dir);
  const read = async () => ({
    instances: (await Promise.all(pids.map(cpuSeconds))).reduce((sum, value) => sum + value, 0),
    kamailio: (await Promise.all(kamailio.map(cpuSeconds))).reduce((sum, value) => sum + value, 0),
    machine: machineTicks(),
    at: performance.now(),
  });
  const start = await read();
  return async () => {
    const end = await read();
    const seconds = (end.at - start.at) / 1000;
    return {
      instances: (end.instances - start.instances) / seconds,
      kamailio: (end.kamailio - start.kamailio) / seconds,
      machineBusy: (end.machine.busy - start.machine.busy) / (end.machine.total - start.machine.total),
    };
  };
}

// ---------------------------------------------------------------- the runs

/** SIPp runs not yet ended: stopped if the bench ends early. */
const sippRuns = new Set<SippRun>();

/** Starts SIPp calling through Kamailio: `calls` calls at `rate` a second, each held {@link HOLD_MS} after its answer. */
async function callers(cluster: Cluster, calls: number, rate: number, timeoutMs: number): Promise<SippRun> {
  if (stopping) throw new Error('the bench is stopping');
  const run = await startSipp({
    scenario: PROXY_CALLER,
    target: cluster.kamailio.address,
    service: 'hello',
    calls,
    rate,
    timeoutMs,
    // -l: no ceiling of SIPp's own on the calls open at once (its default follows the rate and -d).
    extraArgs: ['-d', String(HOLD_MS), '-l', '2000'],
  });
  sippRuns.add(run);
  void run.result.finally(() => sippRuns.delete(run));
  // Started while the bench was being stopped: stopped too (the stop saw no such run).
  if (stopping) await run.stop(1000);
  return run;
}

/** One step of the admission run. */
interface StepFigures {
  readonly rate: number;
  readonly attempted: number;
  readonly answered: number;
  readonly failed: number;
  readonly completed: number;
  readonly failedOver: number;
  /** Calls with their entry in the ledger. */
  readonly metered: number;
  /** Answered calls each instance took, in the dispatcher list's order. */
  readonly perInstance: readonly number[];
  /** New INVITEs a second as SIPp sent them (first to last). */
  readonly keptRate: number;
  readonly setupMs: Summary;
  readonly cpu: CpuFigures;
}

async function admissionStep(cluster: Cluster, ledger: pg.Client, rate: number): Promise<StepFigures> {
  // Both active first: an instance Kamailio took out in the step before (too slow for fr_timer) is probed back in.
  for (const instance of cluster.instances) await untilFlags(cluster.kamailio, instance.sipAddress, 'A', 20_000, `${instance.name} active`);
  const calls = Math.round(rate * STEP_SECONDS);
  const cpu = await cpuWindow(cluster);
  const run = await callers(cluster, calls, rate, (STEP_SECONDS + 40) * 1000);
  const result = await run.result;
  const cpuFigures = await cpu();
  const traces = sippCalls(await readFile(result.files.messages, 'latin1'));
  const log = cluster.kamailio.log();
  const ids = callsOfRun(run.pid, traces.keys());
  const answered = ids.filter((callId) => traces.get(callId)!.final?.status === 200);
  const invited = ids.map((callId) => traces.get(callId)!.invitedAt).sort((a, b) => a - b);
  const placedTo = finalDestinations(log);
  const moved = failedOver(log);
  return {
    rate,
    attempted: result.created,
    answered: answered.length,
    failed: result.failed,
    completed: result.successful,
    failedOver: ids.filter((callId) => moved.has(callId)).length,
    metered: await meteredCalls(ledger, run.pid, result.successful),
    perInstance: cluster.instances.map((instance) => answered.filter((callId) => placedTo.get(callId) === instance.sipAddress).length),
    keptRate: invited.length > 1 ? (invited.length - 1) / ((invited.at(-1)! - invited[0]!) / 1000) : Number.NaN,
    setupMs: summary(answered.map((callId) => traces.get(callId)!.final!.at - traces.get(callId)!.invitedAt)),
    cpu: cpuFigures,
  };
}

/** One kill -9 under load. */
interface FailoverFigures {
  readonly killed: string;
  /** Calls of the run that went through to their end (their BYE answered 200). */
  readonly completed: number;
  /** Calls with their entry in the ledger. */
  readonly metered: number;
  /** Calls up or being set up on the killed instance when it died: lost. */
  readonly lost: number;
  /** New INVITEs Kamailio sent to the dead instance after the kill (each failed over after fr_timer). */
  readonly sentToDead: number;
  /** kill → the last of those (null: none was). */
  readonly lastToDeadMs: number | null;
  /** kill → Kamailio's first failover of an INVITE from the dead instance (null: none). */
  readonly firstFailoverMs: number | null;
  /** How Kamailio first took it out: an INVITE it did not answer, or two probes. */
  readonly outBy: 'invite' | 'probe' | null;
  /** INVITE → 200 of the calls failed over from the dead instance. */
  readonly failedOverSetupMs: Summary;
  readonly newCalls: number;
  readonly newCallsFailed: number;
  /** Calls on the survivor from before the kill that did not end normally. */
  readonly survivorCallsFailed: number;
  /** The instance started again: from its start to Kamailio's flag `A` for it. */
  readonly backInMs: number;
}

async function failoverRun(cluster: Cluster, ledger: pg.Client, index: number): Promise<FailoverFigures> {
  const victim = cluster.instances[index]!;
  const survivor = cluster.instances[1 - index]!;
  const calls = Math.round((FAILOVER_RATE * (BEFORE_KILL_MS + AFTER_KILL_MS)) / 1000);
  const run = await callers(cluster, calls, FAILOVER_RATE, BEFORE_KILL_MS + AFTER_KILL_MS + 70_000);
  await sleep(BEFORE_KILL_MS);
  const killedAt = Date.now();
  await victim.kill();
  // A call the dead instance had taken but not yet answered would wait for Kamailio's
  // fr_inv_timer (60 s): SIPp is stopped once the last call placed could have ended.
  const ended = await Promise.race([run.result.then(() => true), sleep(AFTER_KILL_MS + HOLD_MS + 6000).then(() => false)]);
  const result: SippResult = ended ? await run.result : await run.stop(3000);
  const traces = sippCalls(await readFile(result.files.messages, 'latin1'));
  const log = cluster.kamailio.log();
  const ids = callsOfRun(run.pid, traces.keys());
  const sentTo = dispatched(log);
  const placedTo = finalDestinations(log);
  const trace = (callId: string) => traces.get(callId)!;
  const before = ids.filter((callId) => trace(callId).invitedAt < killedAt);
  const after = ids.filter((callId) => trace(callId).invitedAt >= killedAt);
  const toDead = after.filter((callId) => sentTo.get(callId) === victim.sipAddress);
  const lastToDead = Math.max(...toDead.map((callId) => trace(callId).invitedAt));
  const failovers = failedInvites(log).filter((failed) => failed.address === victim.sipAddress && failed.at >= killedAt && ids.includes(failed.callId));
  const moved = failedOver(log);
  const answeredAfterFailover = ids.filter((callId) => moved.get(callId) === survivor.sipAddress && trace(callId).final?.status === 200);

  const restartedAt = Date.now();
  const again = await cluster.startAgain(index);
  await untilFlags(cluster.kamailio, again.sipAddress, 'A', 30_000, 'the restarted instance active again');
  return {
    killed: victim.name,
    completed: ids.filter((callId) => trace(callId).completed).length,
    metered: await meteredCalls(ledger, run.pid, ids.filter((callId) => trace(callId).completed).length),
    lost: before.filter((callId) => placedTo.get(callId) === victim.sipAddress && !trace(callId).completed).length,
    sentToDead: toDead.length,
    lastToDeadMs: toDead.length ? lastToDead - killedAt : null,
    firstFailoverMs: failovers.length ? Math.min(...failovers.map((failed) => failed.at)) - killedAt : null,
    outBy: markedDown(log, victim.sipAddress, killedAt)?.by ?? null,
    failedOverSetupMs: summary(answeredAfterFailover.map((callId) => trace(callId).final!.at - trace(callId).invitedAt)),
    newCalls: after.length,
    newCallsFailed: after.filter((callId) => !trace(callId).completed).length,
    survivorCallsFailed: before.filter((callId) => placedTo.get(callId) === survivor.sipAddress && !trace(callId).completed).length,
    backInMs: Date.now() - restartedAt,
  };
}

/** What the instances logged at warn level and above: the count, and each message once with its count. */
function problemsLogged(cluster: Cluster): { count: number; messages: Map<string, number> } {
  const messages = new Map<string, number>();
  let count = 0;
  for (const instance of cluster.started) {
    for (const line of instance.serve.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      // pino's levels: 40 warn, 50 error, 60 fatal.
      if ((entry.level ?? 0) < 40) continue;
      count++;
      messages.set(String(entry.msg), (messages.get(String(entry.msg)) ?? 0) + 1);
    }
  }
  return { count, messages };
}

/**
 * The calls of SIPp run `pid` that the instances metered into the one ledger (a call's entry
 * for its synthesis, `call_<Call-ID>_tts`), once `expected` are in or the count has stood still
 * for longer than an instance's pool lets a write wait for a connection (5 s).
 */
async function meteredCalls(ledger: pg.Client, pid: number | undefined, expected: number): Promise<number> {
  const count = async () =>
    Number((await ledger.query<{ count: string }>('SELECT count(*) FROM usage_ledger WHERE request_id LIKE $1', [`call\\_%-${pid}@%\\_tts`])).rows[0]!.count);
  let last = await count();
  let changedAt = Date.now();
  while (last < expected && Date.now() - changedAt < 6000) {
    await sleep(250);
    const now = await count();
    if (now !== last) changedAt = Date.now();
    last = now;
  }
  return last;
}

// ---------------------------------------------------------------- printing

const ms = (value: number | null) => (value === null ? '—' : `${(value / 1000).toFixed(2)} s`);
const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');

/** A program's version from what `args` make it print (SIPp exits non-zero after printing it). */
function version(command: string, args: string[], pattern: RegExp): string {
  const run = spawnSync(command, args, { encoding: 'utf8' });
  return pattern.exec(`${run.stdout ?? ''}${run.stderr ?? ''}`)?.[1] ?? '?';
}

function printSteps(steps: readonly StepFigures[]): void {
  console.log('\nAdmission: SIPp → Kamailio → two instances on one database');
  console.log(
    `| calls/s asked (${STEP_SECONDS} s, ${HOLD_MS} ms calls) | SIPp kept | attempted | answered | failed | failed over | gateway-1 / gateway-2 | INVITE → 200 at SIPp | CPU: instances / Kamailio (cores) | machine busy | in the ledger |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const step of steps) {
    const setup = step.setupMs;
    console.log(
      `| ${step.rate} | ${step.keptRate.toFixed(1)}/s | ${step.attempted} | ${step.answered} | ${step.failed} | ${step.failedOver} | ${step.perInstance.join(' / ')} | p50 ${setup.p50.toFixed(1)} ms, p95 ${setup.p95.toFixed(1)} ms, max ${setup.max.toFixed(0)} ms | ${step.cpu.instances.toFixed(2)} / ${step.cpu.kamailio.toFixed(2)} | ${(step.cpu.machineBusy * 100).toFixed(0)} % | ${step.metered} of ${step.completed} |`,
    );
  }
  const clean = steps.filter((step) => step.failed === 0 && step.attempted === Math.round(step.rate * STEP_SECONDS) && step.answered === step.attempted);
  const best = clean.length ? Math.max(...clean.map((step) => step.rate)) : null;
  const top = best === Math.max(...RATES) ? ' (the highest asked: the limit lies above it)' : '';
  console.log(`highest rate with no call failed: ${best === null ? 'none' : `${best} calls/s${top}`}`);
}

function printFailovers(runs: readonly FailoverFigures[]): void {
  console.log(`\nkill -9 of one instance while ${FAILOVER_RATE} calls/s go through Kamailio (${HOLD_MS} ms calls)`);
  console.log(
    '| run | killed | calls lost on it | new INVITEs sent to it after the kill | kill → last INVITE sent to it | kill → first failover | taken out by | failed-over calls: INVITE → 200 | new calls failed | survivor’s calls failed | in the ledger | started again → active |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  runs.forEach((run, at) => {
    const setup = run.failedOverSetupMs;
    console.log(
      `| ${at + 1} | ${run.killed} | ${run.lost} | ${run.sentToDead} | ${ms(run.lastToDeadMs)} | ${ms(run.firstFailoverMs)} | ${run.outBy ?? '—'} | ${setup.count ? `p50 ${ms(setup.p50)}, max ${ms(setup.max)}` : '—'} | ${run.newCallsFailed} of ${run.newCalls} | ${run.survivorCallsFailed} | ${run.metered} of ${run.completed} | ${ms(run.backInMs)} |`,
    );
  });
}

// ---------------------------------------------------------------- main

let postgres: PostgresRun | undefined;
let ledger: pg.Client | undefined;
let cluster: Cluster | undefined;
let stopping: Promise<void> | undefined;

/** Stops whatever was started, once. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...sippRuns].map((run) => run.stop(1000).catch(() => undefined)));
    await ledger?.end().catch(() => undefined);
    await cluster?.stop().catch((error: unknown) => console.error('stopping the cluster:', error));
    await postgres?.stop().catch((error: unknown) => console.error('stopping PostgreSQL:', error));
    await removeSippRuns();
  })();
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping what the bench started`);
    void stopAll().finally(() => process.exit(130));
  });
}

const startedAt = Date.now();
console.log(`cluster bench, ${new Date().toISOString()}: ${os.availableParallelism()} cores, load average ${load()}`);
console.log(
  `Kamailio ${version(KAMAILIO, ['-v'], /kamailio (\S+)/)}, SIPp ${version('sipp', ['-v'], /SIPp v(\S+?)-/)}, Node ${process.versions.node}; rates ${RATES.join(', ')} calls/s`,
);
try {
  postgres = await startPostgres({ durable: true });
  const databaseUrl = await postgres.createDatabase('cluster');
  ledger = new pg.Client({ connectionString: databaseUrl });
  await ledger.connect();
  cluster = await startCluster({ rtpPorts: RTP_PORTS, instance: { env: sharedStore(databaseUrl), nodeFlags: ['--single-threaded-gc'] } });
  const steps: StepFigures[] = [];
  for (const rate of RATES) {
    steps.push(await admissionStep(cluster, ledger, rate));
    const step = steps.at(-1)!;
    console.log(`  ${rate} calls/s: ${step.attempted} attempted, ${step.answered} answered, ${step.failed} failed (load average ${load()})`);
    // The calls of one step end before the next begins.
    await sleep(2000);
  }
  const failovers: FailoverFigures[] = [];
  for (let run = 0; run < FAILOVER_RUNS; run++) {
    failovers.push(await failoverRun(cluster, ledger, run % 2));
    const last = failovers.at(-1)!;
    console.log(`  kill -9 of ${last.killed}: last INVITE to it ${ms(last.lastToDeadMs)}, first failover ${ms(last.firstFailoverMs)} after the kill`);
  }
  printSteps(steps);
  printFailovers(failovers);
  const problems = problemsLogged(cluster);
  console.log(
    `\nthe instances logged ${problems.count} warnings and errors${problems.count ? `: ${[...problems.messages].map(([msg, times]) => `${msg} (${times})`).join('; ')}` : ''}`,
  );
  console.log(`total ${((Date.now() - startedAt) / 1000).toFixed(0)} s; load average at the end ${load()}`);
} finally {
  await stopAll();
}
