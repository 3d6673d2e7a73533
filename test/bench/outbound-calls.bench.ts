/**
 * Outbound calls placed through `POST /v1/calls` over loopback, against one `sprachrohr serve`
 * process (its own process, so that the load generator does not share the gateway's event
 * loop: the times are what an API client and a callee on the same machine live through).
 *
 * - The callee is a small SIP UAS on a UDP socket in a worker thread of this process: each
 *   INVITE is answered 100, 180 and at once 200 with an SDP naming a second worker's socket,
 *   which counts the RTP it gets by SSRC and throws it away; the 200 is sent again until the
 *   ACK, the gateway's BYE answered 200. Calls are told apart by the user of the To URI
 *   (`sip:c<N>@127.0.0.1:PORT`). Every time is read from one monotonic clock
 *   (process.hrtime), in whichever thread the event happens.
 * - Setup, idle: OUTBOUND_BENCH_IDLE_CALLS calls (100) one after another, nothing else
 *   running; these callees answer 486 Busy Here, so that no call talks while the next is
 *   placed (the gateway's path up to the INVITE is the same as for an answered call). Measured:
 *   the moment the request is handed to the HTTP client → the INVITE's arrival at the callee
 *   socket, and → the 201's arrival.
 * - Load: OUTBOUND_BENCH_RATE calls a second (20), paced (one every 1/rate s, not in bursts),
 *   for OUTBOUND_BENCH_SECONDS (60). Each call runs the route of the dialplan below (synthetic
 *   engines: one sentence of about 2.4 s, then hang-up), so about 50 calls are up at any time
 *   while new ones are placed; the same two times are taken for every call. Once the gateway's
 *   BYE has come, the call is read with GET /v1/calls/{id} until it is over; a call counts as
 *   done when it is `completed` with sip_status 200. Also reported: the gateway's event-loop
 *   delay and RTP pacer lateness over the load (a preload in the server answers SIGUSR2), its
 *   CPU time, warnings it logged, and this process's own event-loop delays (sender and callee).
 *
 * Every request counts against its key's 600 a minute (burst 25; src/catalog/limits.ts), which
 * one key placing 20 calls a second and reading each once would pass twice over: the calls go
 * round-robin over OUTBOUND_BENCH_KEYS live keys (8) of one account, as several customers'
 * would. The outbound limits are raised as well (SPRACHROHR_CALLS_PER_SECOND 2 × rate,
 * SPRACHROHR_CALLS_PER_KEY 1000); RTP ports 24000-24999.
 * Run: npm run bench:calls (builds first; the server is the built CLI)
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { SipRequest } from '../../src/telephony/sip/sip-message.js';
import { parseSipMessage } from '../../src/telephony/sip/sip-parser.js';
import type { PacingStats } from '../../src/telephony/rtp/pacer.js';
import { responseText } from '../helpers/sip-responses.js';
import { bind, closeSocket, rank, sleep } from './calls/common.js';
import { pacerStats, startGateway, stopGateway, type Gateway } from './calls/gateway-process.js';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const RATE = setting('OUTBOUND_BENCH_RATE', 20);
const SECONDS = setting('OUTBOUND_BENCH_SECONDS', 60);
const IDLE_CALLS = setting('OUTBOUND_BENCH_IDLE_CALLS', 100);
const KEYS = setting('OUTBOUND_BENCH_KEYS', 8);
const RING_TIMEOUT_S = 10;
/** About 2.4 s at the synthetic engine's 15 characters a second. */
const SENTENCE = 'Guten Tag, hier ist Ihre Erinnerung.';
const DIALPLAN = `name: outbound-bench
routes:
  - number: reminder
    engines: synthetic
    language: de-CH
    voice: anna
    steps:
      - say: { text: ${JSON.stringify(SENTENCE)} }
      - hangup: {}
`;

/** Milliseconds on the monotonic clock all threads share. */
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** What the workers tell the main thread. */
type WireEvent =
  | { readonly kind: 'ready'; readonly port: number }
  | { readonly kind: 'invite' | 'ack' | 'bye'; readonly user: string; readonly at: number }
  | { readonly kind: 'stopped'; readonly loop: LoopFigures; readonly packetsPerStream: number[]; readonly unexpected: string[] };

interface LoopFigures {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const loopFigures = (loop: IntervalHistogram): LoopFigures => ({ p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 });

// ---------------------------------------------------------------- the callee (worker threads)

/** An INVITE the callee answered: the responses it may have to send again. */
interface Answered {
  readonly cseq: string;
  readonly responses: readonly string[];
  retransmit: NodeJS.Timeout | null;
}

/** The SIP callee: answers every INVITE (486 for users starting with `i`, else 200 with SDP naming `mediaPort`). */
async function runCallee(mediaPort: number): Promise<void> {
  const socket = await bind(0);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const port = socket.address().port;
  const calls = new Map<string, Answered>();
  const unexpected: string[] = [];
  const post = (event: WireEvent): void => parentPort!.postMessage(event);
  socket.on('message', (data, from) => {
    const at = nowMs();
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const request = parsed.message;
    const send = (text: string): void => socket.send(Buffer.from(text), from.port, from.address);
    const callId = request.headers.get('Call-ID') ?? '';
    const user = /^sips?:([^@;]+)@/.exec(request.uri)?.[1] ?? '?';
    const known = calls.get(callId);
    if (request.method === 'INVITE' && known && known.cseq === request.headers.get('CSeq')) {
      for (const text of known.responses) send(text); // the INVITE again
      return;
    }
    switch (request.method) {
      case 'INVITE': {
        if (!known) post({ kind: 'invite', user, at });
        const responses = calleeResponses(request, user, port, mediaPort, known !== undefined);
        const answered: Answered = { cseq: request.headers.get('CSeq') ?? '', responses, retransmit: null };
        calls.set(callId, answered);
        for (const text of answered.responses) send(text);
        // The final response again after 0.5, 1, 2, 4 s until the ACK (RFC 3261 section 13.3.1.4).
        const final = answered.responses.at(-1)!;
        let interval = 500;
        const again = (): void => {
          send(final);
          interval *= 2;
          answered.retransmit = interval <= 4000 ? setTimeout(again, interval) : null;
        };
        answered.retransmit = setTimeout(again, interval);
        break;
      }
      case 'ACK':
        if (known) {
          clearTimeout(known.retransmit ?? undefined);
          known.retransmit = null;
        }
        post({ kind: 'ack', user, at });
        break;
      case 'BYE':
        send(responseText(request, 200, { reason: 'OK' }));
        post({ kind: 'bye', user, at });
        break;
      default:
        unexpected.push(`${request.method} for ${user}`);
        send(responseText(request, request.method === 'OPTIONS' || request.method === 'UPDATE' ? 200 : 501, { reason: 'Bench' }));
    }
  });
  post({ kind: 'ready', port });
  // 'reset' starts the event-loop figures afresh; anything else stops the callee.
  parentPort!.on('message', (command) => {
    if (command === 'reset') return loop.reset();
    for (const answered of calls.values()) if (answered.retransmit) clearTimeout(answered.retransmit);
    loop.disable();
    post({ kind: 'stopped', loop: loopFigures(loop), packetsPerStream: [], unexpected });
    void closeSocket(socket).then(() => parentPort!.close());
  });
}

/** 100 Trying, then 486 Busy Here (users `i…`) or 180 Ringing and 200 OK with an SDP answer in the offer's first G.711 codec. */
function calleeResponses(invite: SipRequest, user: string, port: number, mediaPort: number, inDialog: boolean): string[] {
  const tag = `callee-${user}`;
  const trying = responseText(invite, 100, { reason: 'Trying' });
  if (user.startsWith('i')) return [trying, responseText(invite, 486, { reason: 'Busy Here', toTag: tag })];
  const offered = /^m=audio \d+ RTP\/AVP ([\d ]+)/m.exec(invite.body.toString('latin1'))?.[1]?.split(' ') ?? [];
  const payload = offered.find((type) => type === '0' || type === '8') ?? '0';
  const sdp = [
    'v=0',
    'o=callee 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${mediaPort} RTP/AVP ${payload}`,
    `a=rtpmap:${payload} ${payload === '0' ? 'PCMU' : 'PCMA'}/8000`,
    'a=sendrecv',
    '',
  ].join('\r\n');
  const contact = `<sip:${user}@127.0.0.1:${port}>`;
  const toTag = inDialog ? undefined : tag; // a re-INVITE's To carries the tag already
  const ok = responseText(invite, 200, { reason: 'OK', ...(toTag ? { toTag } : {}), contact, sdp });
  return inDialog ? [ok] : [trying, responseText(invite, 180, { reason: 'Ringing', toTag: tag, contact }), ok];
}

/** The media sink: counts RTP packets by SSRC and keeps nothing else. */
async function runMediaSink(): Promise<void> {
  const socket = await bind(0);
  const streams = new Map<number, number>();
  socket.on('message', (data) => {
    if (data.length < 12) return;
    const ssrc = data.readUInt32BE(8);
    streams.set(ssrc, (streams.get(ssrc) ?? 0) + 1);
  });
  parentPort!.postMessage({ kind: 'ready', port: socket.address().port } satisfies WireEvent);
  parentPort!.once('message', () => {
    const stopped: WireEvent = { kind: 'stopped', loop: { p50: 0, p99: 0, max: 0 }, packetsPerStream: [...streams.values()], unexpected: [] };
    parentPort!.postMessage(stopped);
    void closeSocket(socket).then(() => parentPort!.close());
  });
}

// ---------------------------------------------------------------- the load generator (main thread)

/** A worker of this file running `role`, under tsx like its parent. */
function startWorker(role: 'callee' | 'sink', mediaPort = 0): Promise<{ worker: Worker; port: number }> {
  const code = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const worker = new Worker(code, { eval: true, workerData: { role, mediaPort } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (event: WireEvent) => {
      if (event.kind === 'ready') resolve({ worker, port: event.port });
    });
  });
}

/** Asks a worker to stop and waits for its last report. */
function stopWorker(worker: Worker): Promise<Extract<WireEvent, { kind: 'stopped' }>> {
  return new Promise((resolve) => {
    worker.on('message', (event: WireEvent) => {
      if (event.kind === 'stopped') resolve(event);
    });
    worker.postMessage('stop');
  });
}

/** What the callee saw of each call, by user; waits for an event. */
class Wire {
  private readonly seen = new Map<string, Partial<Record<'invite' | 'ack' | 'bye', number>>>();
  private readonly waiters = new Map<string, Array<() => void>>();
  /** Calls between their 200's ACK and their BYE, and the most there were at once. */
  up = 0;
  peakUp = 0;

  note(event: Extract<WireEvent, { kind: 'invite' | 'ack' | 'bye' }>): void {
    const times = this.seen.get(event.user) ?? {};
    this.seen.set(event.user, times);
    if (times[event.kind] !== undefined) return;
    times[event.kind] = event.at;
    if (!event.user.startsWith('i') && event.kind === 'ack') this.peakUp = Math.max(this.peakUp, ++this.up);
    if (!event.user.startsWith('i') && event.kind === 'bye' && times.ack !== undefined) this.up -= 1;
    for (const wake of this.waiters.get(event.user) ?? []) wake();
  }

  at(user: string, kind: 'invite' | 'ack' | 'bye'): number | undefined {
    return this.seen.get(user)?.[kind];
  }

  /** The time of `kind` for `user` once it came, or undefined after `timeoutMs`. */
  async wait(user: string, kind: 'invite' | 'ack' | 'bye', timeoutMs: number): Promise<number | undefined> {
    const deadline = nowMs() + timeoutMs;
    while (this.at(user, kind) === undefined && nowMs() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - nowMs());
        this.waiters.set(user, [...(this.waiters.get(user) ?? []), () => (clearTimeout(timer), resolve())]);
      });
    }
    this.waiters.delete(user);
    return this.at(user, kind);
  }
}

/** An HTTP exchange: status, JSON body, when the request was handed to the client and when the response's head came. */
interface Exchange {
  readonly status: number;
  readonly body: Record<string, unknown> | null;
  readonly sentAt: number;
  readonly headAt: number;
}

/** The API of the gateway, over keep-alive connections, with one of several keys of an account. */
class Api {
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly url: URL;
  /** Round trips of GET /v1/calls/{id} (request → response head) since the last {@link takeReads}. */
  private reads: number[] = [];

  constructor(
    address: string,
    private readonly keys: readonly string[],
  ) {
    this.url = new URL(address);
  }

  /** A request with key number `key` (modulo the keys). */
  request(method: string, pathname: string, key: number, body?: unknown): Promise<Exchange> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { 'X-API-Key': this.keys[key % this.keys.length]! };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    return new Promise((resolve) => {
      const sentAt = nowMs();
      const request = http.request({ host: this.url.hostname, port: this.url.port, method, path: pathname, headers, agent: this.agent }, (response) => {
        const headAt = nowMs();
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          let parsed: Record<string, unknown> | null = null;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          } catch {
            parsed = null;
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, sentAt, headAt });
        });
      });
      request.on('error', (error) => resolve({ status: 0, body: { error: String(error) }, sentAt, headAt: nowMs() }));
      request.end(payload);
    });
  }

  noteRead(read: Exchange): void {
    this.reads.push(read.headAt - read.sentAt);
  }

  /** The round trips of reads noted since the last call. */
  takeReads(): number[] {
    const reads = this.reads;
    this.reads = [];
    return reads;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One placed call as the benchmark saw it. */
interface Placed {
  readonly user: string;
  readonly status: number;
  readonly id: string | null;
  readonly sentAt: number;
  readonly respondedAt: number;
  readonly invite: number | undefined;
  readonly bye: number | undefined;
  /** The call's last record (GET /v1/calls/{id}), or null when it could not be read. */
  readonly final: Record<string, unknown> | null;
}

const over = (record: Record<string, unknown> | null): boolean => record?.['state'] === 'completed' || record?.['state'] === 'failed';

/** Reads the call until it is over (every 100 ms, at most `timeoutMs`); its last record. */
async function finalRecord(api: Api, id: string, key: number, timeoutMs: number): Promise<Record<string, unknown> | null> {
  const deadline = nowMs() + timeoutMs;
  let record: Record<string, unknown> | null = null;
  for (;;) {
    const read = await api.request('GET', `/v1/calls/${id}`, key);
    api.noteRead(read);
    record = read.status === 200 ? read.body : { state: `GET answered ${read.status}` };
    if (over(record) || nowMs() > deadline) return record;
    await sleep(100);
  }
}

/**
 * Places call number `n` to `prefix`+`n` with key `n` and follows it to its end (`talks`: it
 * is answered and runs its route).
 */
async function placeCall(api: Api, wire: Wire, prefix: string, n: number, calleePort: number, talks: boolean): Promise<Placed> {
  const user = `${prefix}${n}`;
  const order = { to: `sip:${user}@127.0.0.1:${calleePort}`, dialplan: 'bench', ring_timeout_s: RING_TIMEOUT_S };
  const answer = await api.request('POST', '/v1/calls', n, order);
  const id = answer.status === 201 ? String(answer.body?.['id']) : null;
  const base = { user, status: answer.status, id, sentAt: answer.sentAt, respondedAt: answer.headAt };
  if (!id) return { ...base, invite: wire.at(user, 'invite'), bye: undefined, final: answer.body };
  const invite = await wire.wait(user, 'invite', 5_000);
  // A call that talks ends with the gateway's BYE; a busy one with the ACK of the 486.
  const end = await wire.wait(user, talks ? 'bye' : 'ack', (RING_TIMEOUT_S + 20) * 1000);
  if (end !== undefined) await sleep(20);
  return { ...base, invite, bye: wire.at(user, 'bye'), final: await finalRecord(api, id, n, 15_000) };
}

/** `count` calls placed `rate` a second on a fixed schedule; the calls, and how late each left against its slot. */
async function pacedCalls(
  api: Api,
  wire: Wire,
  calleePort: number,
  prefix: string,
  count: number,
  rate: number,
): Promise<{ calls: Placed[]; lateness: number[] }> {
  const started = nowMs() + 20;
  const running: Array<Promise<Placed>> = [];
  const lateness: number[] = [];
  for (let n = 0; n < count; n++) {
    const due = started + (n * 1000) / rate;
    // A timer may fire up to a millisecond early: the last millisecond is waited out in turns of the loop.
    if (due - nowMs() > 1) await sleep(due - nowMs() - 1);
    while (nowMs() < due) await new Promise((resolve) => setImmediate(resolve));
    lateness.push(nowMs() - due);
    running.push(placeCall(api, wire, prefix, n, calleePort, true));
  }
  return { calls: await Promise.all(running), lateness };
}

/** Percentiles of a list of milliseconds, as the tables show them. */
function spread(values: number[], digits = 2): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): string => rank(sorted, p).toFixed(digits);
  return `p50 ${at(50)} ms, p95 ${at(95)} ms, p99 ${at(99)} ms, max ${sorted.at(-1)!.toFixed(digits)} ms`;
}

/** The seconds of CPU (user + system, every thread) a process has used. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * A preload for the server: its event loop's delay since the last SIGUSR2, printed on SIGUSR2
 * (beside the pacer statistics of calls/gateway-process.ts) and started afresh.
 */
function loopPreloadFlag(): string {
  const code = [
    "import { monitorEventLoopDelay } from 'node:perf_hooks';",
    "import { isMainThread } from 'node:worker_threads';",
    'if (isMainThread) {',
    '  const loop = monitorEventLoopDelay({ resolution: 1 });',
    '  loop.enable();',
    "  process.on('SIGUSR2', () => {",
    "    const line = { msg: 'bench event loop', p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };",
    "    process.stdout.write(JSON.stringify(line) + '\\n');",
    '    loop.reset();',
    '  });',
    '}',
  ].join('\n');
  return `--import=data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;
}

/** Starts the gateway with the preloads and the benchmark's settings; the key store is made beforehand. */
async function startBenchGateway(dataDir: string): Promise<Gateway> {
  const flagsBefore = process.env['BENCH_SERVER_NODE_FLAGS'];
  process.env['BENCH_SERVER_NODE_FLAGS'] = `${flagsBefore ?? ''} ${loopPreloadFlag()}`.trim();
  try {
    return await startGateway(DIALPLAN, {
      SPRACHROHR_DATA_DIR: dataDir,
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_RTP_PORTS: '24000-24999',
      SPRACHROHR_CALLS_PER_SECOND: String(Math.max(5, RATE * 2)),
      SPRACHROHR_CALLS_PER_KEY: '1000',
    });
  } finally {
    if (flagsBefore === undefined) delete process.env['BENCH_SERVER_NODE_FLAGS'];
    else process.env['BENCH_SERVER_NODE_FLAGS'] = flagsBefore;
  }
}

/** Follows the server's log: its event-loop lines and the warnings and errors it logs (by message). */
function followLog(gateway: Gateway): { loops: LoopFigures[]; warnings: Map<string, number> } {
  const followed = { loops: [] as LoopFigures[], warnings: new Map<string, number>() };
  let pending = '';
  gateway.server.child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry['msg'] === 'bench event loop') followed.loops.push(entry as unknown as LoopFigures);
      else if (typeof entry['level'] === 'number' && entry['level'] >= 40) {
        const message = String(entry['msg']);
        followed.warnings.set(message, (followed.warnings.get(message) ?? 0) + 1);
      }
    }
  });
  return followed;
}

/** Setup times of placed calls: request → INVITE at the callee, request → 201, 201 → INVITE. */
function setupTimes(calls: Placed[]): { invite: number[]; created: number[]; afterCreated: number[] } {
  const invited = calls.filter((call) => call.invite !== undefined && call.status === 201);
  return {
    invite: invited.map((call) => call.invite! - call.sentAt),
    created: calls.filter((call) => call.status === 201).map((call) => call.respondedAt - call.sentAt),
    afterCreated: invited.map((call) => call.invite! - call.respondedAt),
  };
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-outbound-bench-'));
  const dataDir = path.join(dir, 'data');
  // Imported here: the worker threads load this file too, and need none of the server.
  const { loadConfig } = await import('../../src/config.js');
  const { openKeyStore } = await import('../../src/server.js');
  const { store, keys } = await openKeyStore(loadConfig({ SPRACHROHR_DATA_DIR: dataDir }));
  // Every request counts against its key's 600 a minute (burst 25): the calls are spread over several keys of one account.
  const benchKeys: string[] = [];
  for (let n = 0; n < KEYS; n++) benchKeys.push((await keys.create(`outbound bench ${n}`, 'live')).key);
  await store.close();
  const sink = await startWorker('sink');
  const callee = await startWorker('callee', sink.port);
  const wire = new Wire();
  callee.worker.on('message', (event: WireEvent) => {
    if (event.kind === 'invite' || event.kind === 'ack' || event.kind === 'bye') wire.note(event);
  });
  const gateway = await startBenchGateway(dataDir);
  const log = followLog(gateway);
  const api = new Api(gateway.server.address, benchKeys);
  const sender = monitorEventLoopDelay({ resolution: 1 });
  try {
    // Warm-up: busy callees one at a time, then a few answered calls.
    for (let n = 0; n < 20; n++) await placeCall(api, wire, 'iw', n, callee.port, false);
    await pacedCalls(api, wire, callee.port, 'w', 10, 5);
    await sleep(500);

    api.takeReads();
    const idle: Placed[] = [];
    for (let n = 0; n < IDLE_CALLS; n++) {
      idle.push(await placeCall(api, wire, 'i', n, callee.port, false));
      await sleep(20);
    }
    await sleep(500);

    await pacerStats(gateway); // starts the server's pacer and event-loop figures afresh
    const loopsBefore = log.loops.length;
    const cpuBefore = await cpuSeconds(gateway.pid);
    const idleReads = api.takeReads();
    sender.enable();
    callee.worker.postMessage('reset');
    const loadStarted = nowMs();
    const count = Math.round(RATE * SECONDS);
    const load = await pacedCalls(api, wire, callee.port, 'c', count, RATE);
    const loadMs = nowMs() - loadStarted;
    sender.disable();
    const reads = api.takeReads();
    const cpu = (await cpuSeconds(gateway.pid)) - cpuBefore;
    const pacer = await pacerStats(gateway);
    const serverLoop = log.loops[loopsBefore] ?? null;

    // Every call of the account: none may still be queued, ringing or up.
    const list = await api.request('GET', '/v1/calls?limit=1000', 0);
    const listed = (list.body?.['calls'] as Array<Record<string, unknown>> | undefined) ?? [];
    const stuck = listed.filter((record) => !over(record)).length;
    const firstLoadCall = load.calls[0]?.id ? await api.request('GET', `/v1/calls/${load.calls[0].id}`, 0) : null;

    const calleeStopped = await stopWorker(callee.worker);
    const sinkStopped = await stopWorker(sink.worker);
    printFigures({
      idle,
      load: load.calls,
      lateness: load.lateness,
      loadMs,
      cpu,
      pacer,
      peakUp: wire.peakUp,
      idleReads,
      reads,
      serverLoop,
      sender: loopFigures(sender),
      calleeStopped,
      sinkStopped,
    });
    console.log(
      `| GET /v1/calls?limit=1000 at the end | ${list.status === 200 ? `${listed.length} calls, ${stuck} not over` : `answered ${list.status}`} | none not over |\n` +
        `| GET /v1/calls/{id} of the first load call at the end (the dialer keeps KEEP_ENDED calls over) | ${firstLoadCall?.status ?? '—'} | — |`,
    );
    const refusals = new Map<string, number>();
    for (const call of load.calls.filter((placed) => placed.status !== 201)) {
      const error = call.final?.['error'] as { detail?: unknown } | string | undefined;
      const what = `${call.status} ${typeof error === 'object' ? String(error.detail) : String(error)}`;
      refusals.set(what, (refusals.get(what) ?? 0) + 1);
    }
    if (refusals.size > 0) console.log(`Refused orders: ${[...refusals].map(([what, times]) => `${times} × ${what}`).join('; ')}`);
    const warnings = [...log.warnings].map(([message, times]) => `${times} × ${message}`);
    console.log(`Gateway warnings and errors logged: ${warnings.length === 0 ? 'none' : warnings.join('; ')}`);
    if (calleeStopped.unexpected.length > 0) console.log(`Unexpected requests at the callee: ${calleeStopped.unexpected.slice(0, 10).join(', ')}`);
  } finally {
    api.close();
    await stopGateway(gateway);
    await Promise.all([callee.worker.terminate(), sink.worker.terminate()]);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** What one run measured. */
interface Figures {
  readonly idle: Placed[];
  readonly load: Placed[];
  readonly lateness: number[];
  readonly loadMs: number;
  readonly cpu: number;
  readonly pacer: PacingStats | null;
  readonly peakUp: number;
  readonly idleReads: number[];
  readonly reads: number[];
  readonly serverLoop: LoopFigures | null;
  readonly sender: LoopFigures;
  readonly calleeStopped: Extract<WireEvent, { kind: 'stopped' }>;
  readonly sinkStopped: Extract<WireEvent, { kind: 'stopped' }>;
}

function printFigures(f: Figures): void {
  const idle = setupTimes(f.idle);
  const load = setupTimes(f.load);
  const idleBusy = f.idle.filter((call) => call.final?.['state'] === 'failed' && call.final['sip_status'] === 486).length;
  const statuses = new Map<number, number>();
  for (const call of f.load) statuses.set(call.status, (statuses.get(call.status) ?? 0) + 1);
  const created = statuses.get(201) ?? 0;
  const serverErrors = f.load.filter((call) => call.status >= 500 || call.status === 0).length;
  const done = f.load.filter((call) => call.final?.['state'] === 'completed' && call.final['sip_status'] === 200);
  const noInvite = f.load.filter((call) => call.status === 201 && call.invite === undefined).length;
  const noBye = f.load.filter((call) => call.status === 201 && call.invite !== undefined && call.bye === undefined).length;
  const notOver = f.load.filter((call) => call.status === 201 && !over(call.final)).length;
  const failed = f.load.filter((call) => call.final?.['state'] === 'failed');
  const causes = [...new Set(failed.map((call) => String(call.final?.['cause'])))].join(', ');
  const talk = f.load.filter((call) => call.bye !== undefined && call.invite !== undefined).map((call) => call.bye! - call.invite!);
  const packets = f.sinkStopped.packetsPerStream.sort((a, b) => a - b);
  const loop = (figures: LoopFigures | null): string =>
    figures ? `p50 ${figures.p50.toFixed(2)} ms, p99 ${figures.p99.toFixed(2)} ms, max ${figures.max.toFixed(2)} ms` : 'not read';
  const load1 = `${RATE} calls/s for ${SECONDS} s`;
  console.log(
    `Outbound calls over loopback: one \`sprachrohr serve\` process; this process sends the requests (main thread) and is the callee (SIP and RTP in two worker threads); ` +
      `route on synthetic engines (${SENTENCE.length} characters, then hang-up); calls round-robin over ${KEYS} keys. ${os.availableParallelism()} cores, Node ${process.version}.`,
  );
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  console.log(`| request → INVITE at the callee, idle (${idle.invite.length} calls one at a time) | ${spread(idle.invite)} | p50 ≤ 5 ms |`);
  console.log(`| request → 201, idle | ${spread(idle.created)} | — |`);
  console.log(`| 201 → INVITE at the callee, idle (the INVITE leaves once the media thread has bound the RTP ports) | ${spread(idle.afterCreated)} | — |`);
  console.log(`| GET /v1/calls/{id} round trip, idle (${f.idleReads.length} reads) | ${spread(f.idleReads)} | — |`);
  console.log(`| idle calls ended failed/486 as the callee answered | ${idleBusy} of ${f.idle.length} | all |`);
  console.log(`| request → INVITE at the callee, during ${load1} (${load.invite.length} calls) | ${spread(load.invite)} | p50 ≤ 5 ms |`);
  console.log(`| request → 201, during ${load1} | ${spread(load.created)} | — |`);
  console.log(`| 201 → INVITE at the callee, during ${load1} | ${spread(load.afterCreated)} | — |`);
  console.log(`| GET /v1/calls/{id} round trip, during ${load1} (${f.reads.length} reads) | ${spread(f.reads)} | — |`);
  console.log(
    `| calls ordered (${load1}, paced; ${(f.loadMs / 1000).toFixed(1)} s to the last call's end) | ${f.load.length}: ${[...statuses].map(([status, n]) => `${n} × ${status || 'no answer'}`).join(', ')}; ${serverErrors} 5xx or broken | every one 201 |`,
  );
  console.log(`| completed with sip_status 200 | ${done.length} of ${f.load.length} | all |`);
  console.log(
    `| lost: 201 without INVITE / INVITE without BYE / not over 15 s after / failed | ${noInvite} / ${noBye} / ${notOver} / ${failed.length}${causes ? ` (${causes})` : ''} | none |`,
  );
  console.log(`| answered calls up at once (ACK → BYE at the callee) | at most ${f.peakUp} | — |`);
  console.log(`| INVITE → BYE at the callee (ring, answer and the sentence) | ${spread(talk, 0)} | — |`);
  console.log(
    `| RTP at the callee's media port | ${packets.length} streams for ${created} calls of the load and 10 of the warm-up; packets per stream p50 ${rank(packets, 50)}, min ${packets[0] ?? '—'} | one per call |`,
  );
  console.log(`| pacing of the requests: sent after their slot | ${spread(f.lateness)} | — |`);
  console.log(`| gateway's event loop delay during the load | ${loop(f.serverLoop)} | — |`);
  console.log(
    `| gateway's RTP pacer during the load: tick lateness | ${f.pacer ? `p50 ${f.pacer.p50LatenessMs.toFixed(2)} ms, p99 ${f.pacer.p99LatenessMs.toFixed(2)} ms, max ${f.pacer.maxLatenessMs.toFixed(2)} ms, ${f.pacer.skippedTicks} ticks skipped of ${f.pacer.ticks}` : 'not read'} | — |`,
  );
  console.log(`| gateway's CPU during the load (all threads) | ${((f.cpu / (f.loadMs / 1000)) * 100).toFixed(0)} % of one core | — |`);
  console.log(`| this process's event loops during the load: sender / callee | ${loop(f.sender)} / ${loop(f.calleeStopped.loop)} | — |`);
}

if (!isMainThread) {
  const { role, mediaPort } = workerData as { role: 'callee' | 'sink'; mediaPort: number };
  await (role === 'callee' ? runCallee(mediaPort) : runMediaSink());
} else if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
