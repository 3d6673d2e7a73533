/**
 * SIPp (Debian package `sip-tester`) as a real SIP peer for the telephony tests: runs a scenario
 * against a target (or as a server), each run in its own temporary folder with its logs, and
 * returns the exit code, the call counts of its statistics file and, for a failed run, a report
 * with the log excerpts that explain it. Also sends raw malformed or oversized SIP over UDP and
 * TCP, and receives RTP.
 */
import { spawn, execFile } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The SIPp command. */
export const SIPP = process.env.SIPP_BIN ?? 'sipp';

/** The folder of the scenario files (`test/integration/sipp/`). */
export const SIPP_SCENARIOS = fileURLToPath(new URL('../integration/sipp/', import.meta.url));

/** The path of a scenario of `test/integration/sipp/`, e.g. `sippScenario('options.xml')`. */
export function sippScenario(file: string): string {
  return join(SIPP_SCENARIOS, file);
}

/** SIPp's transports used here: UDP with one socket, TCP with one connection. */
export type SippTransport = 'u1' | 't1';

export interface SippOptions {
  /** A scenario file, or one built into SIPp (`{ builtin: 'uas' }`, see `sipp -h`). */
  readonly scenario: string | { readonly builtin: string };
  /** `host:port` to call; without it SIPp runs as a server and waits for calls. */
  readonly target?: string;
  readonly transport?: SippTransport;
  /** SIPp's address (`-i`, bound with `-bind_local`); 127.0.0.1 unless given. */
  readonly localIp?: string;
  /** SIPp's SIP port (`-p`); a free one unless given. */
  readonly localPort?: number;
  /** SIPp's RTP port (`-mp`, even); unless given SIPp takes the first free one from 6000 up. */
  readonly mediaPort?: number;
  /** Calls to make or take before SIPp exits (`-m`); 1 unless given, 0 for no limit (a server that runs until `stop()`). */
  readonly calls?: number;
  /** New calls a second (`-r`); SIPp's default is 10. */
  readonly rate?: number;
  /** The user part of the Request-URI, the called number ([service], `-s`). */
  readonly service?: string;
  /** The whole run: SIPp's global timeout (`-timeout` rounded up to seconds, with `-timeout_error`); killed shortly after if still running. */
  readonly timeoutMs: number;
  /** Keywords for the scenario (`-key name value`): `[name]` in messages and in `play_pcap_audio="[name]"`. */
  readonly variables?: Readonly<Record<string, string>>;
  /** Global variables (`-set name value`): `[$name]` in the scenario, which must declare them (`<Global variables="name"/>`). */
  readonly globals?: Readonly<Record<string, string>>;
  readonly extraArgs?: readonly string[];
}

/** Files of one run, all in `dir`. */
export interface SippFiles {
  readonly dir: string;
  /** Every SIP message sent and received (`-trace_msg`). */
  readonly messages: string;
  /** Unexpected messages, failed checks, timeouts (`-trace_err`). */
  readonly errors: string;
  /** Statistics (`-trace_stat`, `;`-separated, a header line and one line a dump). */
  readonly stats: string;
  /** The final screens (`-trace_screen`): the scenario's message counts among them. */
  readonly screen: string;
  /** Output of `<log>` actions (`-trace_logs`). */
  readonly logs: string;
  /** Debugging output about aborted calls (`-trace_calldebug`). */
  readonly callDebug: string;
}

export interface SippResult {
  readonly command: readonly string[];
  /** SIPp's exit status (null when a signal ended it); see `sippExitMeaning`. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Killed by this helper because the run outlived `timeoutMs` (SIPp's own timeout did not end it). */
  readonly killed: boolean;
  /** Ended by `stop()`. */
  readonly stopped: boolean;
  readonly successful: number;
  readonly failed: number;
  /** Calls SIPp created (incoming and outgoing). */
  readonly created: number;
  readonly retransmissions: number;
  /** The last line of the statistics file by column name (empty when SIPp wrote none). */
  readonly stats: Readonly<Record<string, string>>;
  readonly localPort: number;
  readonly files: SippFiles;
  /** Path of the message log (`files.messages`). */
  readonly messagesLog: string;
  /** The error log's text ('' when SIPp wrote none). */
  readonly errors: string;
  readonly stderr: string;
  /** The command, its exit, the counts and the ends of the logs: for a failing test's message. */
  readonly report: string;
}

/** A started SIPp. */
export interface SippRun {
  readonly localPort: number;
  readonly localIp: string;
  readonly transport: SippTransport;
  /** `localIp:localPort`, for the other side's `target`. */
  readonly address: string;
  readonly files: SippFiles;
  readonly pid: number | undefined;
  /** Settles when SIPp ends. */
  readonly result: Promise<SippResult>;
  /** Resolves once SIPp's SIP socket is bound (listening, for TCP); rejects if SIPp ends first. */
  listening(timeoutMs?: number): Promise<void>;
  /** Asks SIPp to end (SIGTERM: no new calls, open ones end), kills it after `graceMs`; resolves with the result. */
  stop(graceMs?: number): Promise<SippResult>;
}

/** What SIPp's exit status says (SIPp 3.6). */
export function sippExitMeaning(exitCode: number | null, signal: NodeJS.Signals | null = null): string {
  if (exitCode === null) return `ended by ${signal ?? 'a signal'}`;
  switch (exitCode) {
    case 0:
      return 'all calls succeeded';
    case 1:
      return 'at least one call failed (or the scenario did not load: see stderr)';
    case 97:
      return 'exit on internal command (stop_now)';
    case 98:
      return 'test result unknown';
    case 99:
      return 'normal exit without calls processed';
    case 254:
      return 'fatal: could not bind a socket';
    case 255:
      return 'fatal error, or the global timeout was reached';
    default:
      return `unknown exit status ${exitCode}`;
  }
}

const runDirs = new Set<string>();

/** Removes the folders of every run of this process (call in `afterAll`). */
export async function removeSippRuns(): Promise<void> {
  const dirs = [...runDirs];
  runDirs.clear();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Runs SIPp to its end. A port taken between choosing and binding it is chosen again (unless `localPort` was given). */
export async function runSipp(options: SippOptions): Promise<SippResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await (await startSipp(options)).result;
    if (result.exitCode !== 254 || options.localPort !== undefined || attempt === 3) return result;
  }
}

/** Starts SIPp; `result` settles when it ends. */
export async function startSipp(options: SippOptions): Promise<SippRun> {
  await requireSipp();
  const transport = options.transport ?? 'u1';
  const localIp = options.localIp ?? '127.0.0.1';
  const localPort = options.localPort ?? (await freePort(localIp, transport));
  const dir = await mkdtemp(join(tmpdir(), 'sipp-'));
  runDirs.add(dir);
  const files: SippFiles = {
    dir,
    messages: join(dir, 'messages.log'),
    errors: join(dir, 'errors.log'),
    stats: join(dir, 'stats.csv'),
    screen: join(dir, 'screen.log'),
    logs: join(dir, 'logs.log'),
    callDebug: join(dir, 'calldebug.log'),
  };
  const args: string[] = [];
  if (options.target) args.push(options.target);
  if (typeof options.scenario === 'string') args.push('-sf', options.scenario);
  else args.push('-sn', options.scenario.builtin);
  args.push('-t', transport, '-i', localIp, '-bind_local', '-p', String(localPort), '-nostdin');
  if (options.mediaPort !== undefined) args.push('-mp', String(options.mediaPort));
  const calls = options.calls ?? 1;
  if (calls > 0) args.push('-m', String(calls));
  if (options.rate !== undefined) args.push('-r', String(options.rate));
  if (options.service !== undefined) args.push('-s', options.service);
  // SIPp takes whole seconds here (it truncates milliseconds).
  args.push('-timeout', `${Math.max(1, Math.ceil(options.timeoutMs / 1000))}s`, '-timeout_error');
  args.push('-trace_msg', '-message_file', files.messages);
  args.push('-trace_err', '-error_file', files.errors);
  args.push('-trace_stat', '-stf', files.stats);
  args.push('-trace_screen', '-screen_file', files.screen);
  args.push('-trace_logs', '-log_file', files.logs);
  args.push('-trace_calldebug', '-calldebug_file', files.callDebug);
  for (const [name, value] of Object.entries(options.variables ?? {})) args.push('-key', name, value);
  for (const [name, value] of Object.entries(options.globals ?? {})) args.push('-set', name, value);
  args.push(...(options.extraArgs ?? []));
  const command = [SIPP, ...args];

  const child = spawn(SIPP, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  // SIPp redraws its screen on stdout every second: keep the end only.
  child.stdout.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString('latin1')).slice(-16_000)));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('latin1')).slice(-32_000)));
  let killed = false;
  let stopped = false;
  let exited = false;
  const kill = (graceMs: number) => {
    if (exited) return;
    child.kill('SIGTERM');
    setTimeout(() => exited || child.kill('SIGKILL'), graceMs).unref();
  };
  const hardTimer = setTimeout(() => {
    killed = !exited;
    kill(2000);
  }, options.timeoutMs + 3000);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', (error) => {
      exited = true;
      clearTimeout(hardTimer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(hardTimer);
      resolve({ code, signal });
    });
  });
  const result = ended.then(({ code, signal }) => collectResult({ command, code, signal, killed, stopped, localPort, files, stdout, stderr }));
  // A run nobody waits for must not become an unhandled rejection.
  result.catch(() => {});

  return {
    localPort,
    localIp,
    transport,
    address: `${localIp}:${localPort}`,
    files,
    pid: child.pid,
    result,
    listening: (timeoutMs = 5000) =>
      waitBound(
        localIp,
        localPort,
        transport,
        () => exited,
        timeoutMs,
        () => stderr,
      ),
    stop: async (graceMs = 2000) => {
      stopped = !exited;
      kill(graceMs);
      return result;
    },
  };
}

/**
 * Starts SIPp as a server (no target, no call limit unless `calls` says) and waits until it
 * listens; a port taken between choosing and binding it is chosen again (unless `localPort` was given).
 */
export async function startSippServer(options: Omit<SippOptions, 'target'>): Promise<SippRun> {
  for (let attempt = 1; ; attempt++) {
    const run = await startSipp({ calls: 0, ...options });
    try {
      await run.listening();
      return run;
    } catch (error) {
      const result = await run.stop(500);
      if (result.exitCode !== 254 || options.localPort !== undefined || attempt === 3) throw error;
    }
  }
}

/** Throws an error carrying the run's report unless SIPp exited 0 with `calls` successful calls and none failed. */
export function assertSippPassed(result: SippResult, calls = 1): void {
  if (result.exitCode !== 0 || result.failed !== 0 || result.successful < calls) {
    throw new Error(`SIPp run failed (expected ${calls} successful call${calls === 1 ? '' : 's'}):\n${result.report}`);
  }
}

async function collectResult(run: {
  command: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  killed: boolean;
  stopped: boolean;
  localPort: number;
  files: SippFiles;
  stdout: string;
  stderr: string;
}): Promise<SippResult> {
  const { files } = run;
  const [statsText, errors, screen, messages, logs, callDebug] = await Promise.all([
    readOptional(files.stats),
    readOptional(files.errors),
    readOptional(files.screen),
    readOptional(files.messages),
    readOptional(files.logs),
    readOptional(files.callDebug),
  ]);
  const stats = parseSippStats(statsText);
  const count = (name: string) => Number(stats[name] ?? 0) || 0;
  const successful = count('SuccessfulCall(C)');
  const failed = count('FailedCall(C)');
  const created = count('TotalCallCreated');
  const retransmissions = count('Retransmissions(C)');
  const stderr = run.stderr.trim();
  const sections: string[] = [
    `$ ${run.command.map(shellQuote).join(' ')}`,
    `folder: ${files.dir}`,
    `exit: ${run.code ?? run.signal} (${sippExitMeaning(run.code, run.signal)})${run.killed ? ', killed after its timeout' : ''}${run.stopped ? ', stopped' : ''}`,
    `calls: ${successful} successful, ${failed} failed, ${created} created, ${retransmissions} retransmissions`,
  ];
  const failures = Object.entries(stats)
    .filter(([name, value]) => /^Failed.*\(C\)$/.test(name) && name !== 'FailedCall(C)' && Number(value) > 0)
    .map(([name, value]) => `${name.replace('(C)', '')} ${value}`);
  if (failures.length) sections.push(`failures: ${failures.join(', ')}`);
  if (/raw (IPv[46] )?socket/i.test(stderr)) {
    sections.push(
      'hint: play_pcap_audio sends through a raw socket: run as root, or give the binary the capability once: sudo setcap cap_net_raw+ep "$(command -v sipp)"',
    );
  }
  if (stderr) sections.push(`--- stderr (end) ---\n${tail(dedupeLines(stderr), 3000)}`);
  if (errors.trim()) sections.push(`--- ${files.errors} (end) ---\n${tail(errors, 4000)}`);
  if (logs.trim()) sections.push(`--- ${files.logs} (end) ---\n${tail(logs, 2000)}`);
  if (callDebug.trim()) sections.push(`--- ${files.callDebug} (end) ---\n${tail(callDebug, 3000)}`);
  const scenarioScreen = firstScreen(screen);
  if (scenarioScreen) sections.push(`--- scenario screen ---\n${scenarioScreen}`);
  else if (run.stdout.trim()) sections.push(`--- stdout (end) ---\n${tail(stripAnsi(run.stdout), 3000)}`);
  if (messages.trim()) sections.push(`--- ${files.messages} (end) ---\n${tail(messages, 6000)}`);
  return {
    command: run.command,
    exitCode: run.code,
    signal: run.signal,
    killed: run.killed,
    stopped: run.stopped,
    successful,
    failed,
    created,
    retransmissions,
    stats,
    localPort: run.localPort,
    files,
    messagesLog: files.messages,
    errors,
    stderr,
    report: sections.join('\n'),
  };
}

/** The last line of a SIPp statistics file (`-trace_stat`) by column name. */
export function parseSippStats(text: string): Record<string, string> {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) return {};
  const names = lines[0]!.split(';');
  const values = lines[lines.length - 1]!.split(';');
  const stats: Record<string, string> = {};
  names.forEach((name, at) => {
    if (name) stats[name] = values[at] ?? '';
  });
  return stats;
}

async function readOptional(path: string): Promise<string> {
  try {
    return await readFile(path, 'latin1');
  } catch {
    return '';
  }
}

function tail(text: string, chars: number): string {
  return text.length <= chars ? text : `[…]${text.slice(-chars)}`;
}

/** SIPp prints each error twice (screen and stderr log). */
function dedupeLines(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) if (out[out.length - 1] !== line) out.push(line);
  return out.join('\n');
}

function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

/** The first screen of a screen file: the scenario with its message counts. */
function firstScreen(screen: string): string {
  const start = screen.indexOf('Scenario Screen');
  if (start < 0) return '';
  const lineStart = screen.lastIndexOf('\n', start) + 1;
  const end = screen.indexOf('Statistics Screen', start);
  const block = screen.slice(lineStart, end < 0 ? undefined : screen.lastIndexOf('\n', end));
  return block.trimEnd();
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

let sippChecked: Promise<SippVersion> | null = null;

export interface SippVersion {
  /** E.g. `3.6.1`. */
  readonly version: string;
  /** Compiled-in features from the version banner, e.g. `['SCTP', 'PCAP', 'RTPSTREAM']`. */
  readonly features: readonly string[];
  /** `play_pcap_audio` and `play_dtmf` (PCAP). */
  readonly pcapPlay: boolean;
  /** `rtp_stream` and `<rtp_echo>` (RTPSTREAM). */
  readonly rtpStream: boolean;
}

/** SIPp's version and features; fails with what to install when SIPp is missing. */
export function requireSipp(): Promise<SippVersion> {
  sippChecked ??= new Promise<SippVersion>((resolve, reject) => {
    execFile(SIPP, ['-v'], { timeout: 10_000 }, (error, stdout, stderr) => {
      const banner = `${stdout}${stderr}`;
      const match = /SIPp v(\d+\.\d+(?:\.\d+)?)([-\w]*)/.exec(banner);
      if (!match) {
        const why =
          error && (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : `did not report its version (${error?.message ?? banner.slice(0, 200)})`;
        reject(new Error(`SIPp (${SIPP}) ${why}: install the Debian package sip-tester (npm run system-deps)`));
        return;
      }
      const features = match[2]!.split('-').filter(Boolean);
      resolve({ version: match[1]!, features, pcapPlay: features.includes('PCAP'), rtpStream: features.includes('RTPSTREAM') });
    });
  });
  return sippChecked;
}

/** A port free on `host` for the transport (for TCP, free for UDP as well). */
export async function freePort(host = '127.0.0.1', transport: SippTransport = 'u1'): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freeUdpPort(host);
    if (transport === 'u1' || (await tcpPortFree(host, port))) return port;
  }
  throw new Error(`no free port on ${host}`);
}

function freeUdpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', reject);
    socket.bind(0, host, () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

function tcpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Polls /proc/net until `host:port` is bound (UDP) or listening (TCP). */
async function waitBound(host: string, port: number, transport: SippTransport, ended: () => boolean, timeoutMs: number, stderr: () => string): Promise<void> {
  const table = `/proc/net/${transport === 't1' ? 'tcp' : 'udp'}${host.includes(':') ? '6' : ''}`;
  if (!existsSync(table)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return;
  }
  const deadline = Date.now() + timeoutMs;
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  while (Date.now() < deadline) {
    if (ended()) throw new Error(`SIPp ended before it listened on ${host}:${port}:\n${tail(dedupeLines(stderr()), 3000)}`);
    const rows = (await readFile(table, 'utf8')).split('\n').slice(1);
    const bound = rows.some((row) => {
      const cols = row.trim().split(/\s+/);
      return cols[1]?.endsWith(`:${portHex}`) && (transport !== 't1' || cols[3] === '0A');
    });
    if (bound) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`SIPp did not listen on ${host}:${port} within ${timeoutMs} ms:\n${tail(dedupeLines(stderr()), 3000)}`);
}

function splitTarget(target: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  if (!match) throw new Error(`target must be host:port, not ${target}`);
  return { host: match[1]!, port: Number(match[2]) };
}

/** The largest UDP payload over IPv4 (65,535 minus the IP and UDP headers). */
export const MAX_UDP_PAYLOAD = 65_507;

/**
 * Sends each payload as one UDP datagram to `target` from one socket, then collects what comes
 * back for `waitMs`. A payload over MAX_UDP_PAYLOAD bytes cannot be sent and throws.
 */
export async function sendUdp(
  target: string,
  payloads: ReadonlyArray<string | Uint8Array>,
  options: { localIp?: string; waitMs?: number } = {},
): Promise<Buffer[]> {
  const { host, port } = splitTarget(target);
  const socket: UdpSocket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const received: Buffer[] = [];
  socket.on('message', (message) => received.push(message));
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, options.localIp ?? (host.includes(':') ? '::1' : '127.0.0.1'), () => resolve());
    });
    for (const payload of payloads) {
      await new Promise<void>((resolve, reject) =>
        socket.send(typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload, port, host, (error) => (error ? reject(error) : resolve())),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.waitMs ?? 200));
  } finally {
    socket.close();
  }
  return received;
}

/**
 * Opens a TCP connection to `target`, writes `data` and collects what comes back until the peer
 * closes or `waitMs` pass after the write; then closes. `closedByPeer` tells whether the peer
 * ended the connection (as it may after something oversized).
 */
export function sendTcp(
  target: string,
  data: string | Uint8Array,
  options: { waitMs?: number } = {},
): Promise<{ received: Buffer; closedByPeer: boolean; error: Error | null }> {
  const { host, port } = splitTarget(target);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closedByPeer = false;
    let writeError: Error | null = null;
    let timer: NodeJS.Timeout | undefined;
    let connected = false;
    const socket = connect({ host, port }, () => {
      connected = true;
      socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, (error) => {
        if (error) writeError = error;
        timer = setTimeout(() => socket.destroy(), options.waitMs ?? 300);
      });
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      closedByPeer = true;
      socket.end();
    });
    socket.on('error', (error) => {
      if (!connected) reject(error);
      else {
        closedByPeer = true;
        writeError ??= error;
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (connected) resolve({ received: Buffer.concat(chunks), closedByPeer, error: writeError });
    });
  });
}

/** A raw message for robustness tests. */
export interface RawSipMessage {
  readonly name: string;
  readonly data: Buffer;
}

/**
 * Malformed, hostile or oversized messages for `target` (its host and port go into the
 * Request-URIs), one UDP datagram each: no SIP at all, binary noise, an empty datagram, a bare
 * CRLF keepalive, a header section that never ends, NUL and 8-bit bytes in headers, 1,000 Via
 * headers, a 60 KB header line, a Content-Length far beyond the datagram, and an OPTIONS padded to
 * the largest UDP payload (65,507 bytes). Every one has its own Call-ID (or none).
 */
export function malformedSipMessages(target: string): RawSipMessage[] {
  const { host, port } = splitTarget(target);
  const uri = `sip:service@${host.includes(':') ? `[${host}]` : host}:${port}`;
  const headers = (callId: string, method = 'OPTIONS', extra = '') =>
    `Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-${callId}\r\n` +
    `From: <sip:raw@127.0.0.1>;tag=${callId}\r\n` +
    `To: <${uri}>\r\n` +
    `Call-ID: ${callId}@raw.invalid\r\n` +
    `CSeq: 1 ${method}\r\n` +
    `Max-Forwards: 70\r\n${extra}`;
  const noise = Buffer.alloc(1400);
  let seed = 0x2545f491;
  for (let i = 0; i < noise.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    noise[i] = seed & 0xff;
  }
  const oversizedHead = `OPTIONS ${uri} SIP/2.0\r\n${headers('raw-oversized', 'OPTIONS', 'Content-Type: text/plain\r\n')}Content-Length: `;
  const bodyLength = (length: number) => MAX_UDP_PAYLOAD - Buffer.byteLength(`${oversizedHead}${length}\r\n\r\n`);
  let oversizedBody = bodyLength(0);
  oversizedBody = bodyLength(oversizedBody);
  const messages: Array<[string, string | Buffer]> = [
    ['not SIP', 'GET / HTTP/1.1\r\nHost: example.invalid\r\n\r\n'],
    ['binary noise', noise],
    ['empty datagram', Buffer.alloc(0)],
    ['CRLF keepalive', '\r\n\r\n'],
    ['request line only', `OPTIONS ${uri} SIP/2.0\r\n\r\n`],
    ['headers never end', `OPTIONS ${uri} SIP/2.0\r\n${headers('raw-noend')}Content-Length: 0\r\n`],
    [
      'NUL and 8-bit bytes',
      Buffer.concat([
        Buffer.from(`OPTIONS ${uri} SIP/2.0\r\n${headers('raw-binary')}Subject: `, 'latin1'),
        Buffer.from([0, 0xff, 0xfe, 0x80, 0]),
        Buffer.from('\r\nContent-Length: 0\r\n\r\n'),
      ]),
    ],
    [
      '1000 Via headers',
      `OPTIONS ${uri} SIP/2.0\r\n${'Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-many\r\n'.repeat(1000)}${headers('raw-vias')}Content-Length: 0\r\n\r\n`,
    ],
    ['60 KB header line', `OPTIONS ${uri} SIP/2.0\r\n${headers('raw-longline')}Subject: ${'x'.repeat(60_000)}\r\nContent-Length: 0\r\n\r\n`],
    [
      'Content-Length beyond the datagram',
      `INVITE ${uri} SIP/2.0\r\n${headers('raw-shortbody', 'INVITE', 'Content-Type: application/sdp\r\n')}Content-Length: 1000000\r\n\r\nv=0\r\n`,
    ],
    ['Content-Length not a number', `OPTIONS ${uri} SIP/2.0\r\n${headers('raw-badlength')}Content-Length: 12abc\r\n\r\n`],
    ['largest UDP datagram', `${oversizedHead}${oversizedBody}\r\n\r\n${'y'.repeat(oversizedBody)}`],
  ];
  return messages.map(([name, data]) => ({ name, data: typeof data === 'string' ? Buffer.from(data, 'latin1') : data }));
}

/** An INVITE of 100 KB (a 100,000-byte SDP body) for TCP, where one message may exceed a datagram. */
export function oversizedTcpInvite(target: string, bodyBytes = 100_000): Buffer {
  const { host, port } = splitTarget(target);
  const uri = `sip:service@${host.includes(':') ? `[${host}]` : host}:${port}`;
  const line = 'a=x-padding:' + 'p'.repeat(86) + '\r\n';
  let body = 'v=0\r\no=raw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n';
  while (body.length + line.length <= bodyBytes) body += line;
  body += 'a'.repeat(Math.max(0, bodyBytes - body.length - 2)) + '\r\n';
  const head =
    `INVITE ${uri} SIP/2.0\r\n` +
    `Via: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK-raw-tcp-big\r\n` +
    `From: <sip:raw@127.0.0.1>;tag=raw-tcp-big\r\nTo: <${uri}>\r\nCall-ID: raw-tcp-big@raw.invalid\r\nCSeq: 1 INVITE\r\n` +
    `Max-Forwards: 70\r\nContact: <sip:raw@127.0.0.1:9;transport=tcp>\r\nContent-Type: application/sdp\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return Buffer.from(head + body, 'latin1');
}

/** An RTP packet as received (header fields and payload). */
export interface ReceivedRtp {
  readonly from: { readonly address: string; readonly port: number };
  readonly at: number;
  readonly payloadType: number;
  readonly marker: boolean;
  readonly sequence: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payload: Buffer;
}

/** A UDP socket that keeps the RTP packets it receives (for checking what a SIPp scenario plays). */
export interface RtpSink {
  readonly port: number;
  readonly packets: ReceivedRtp[];
  /** Resolves once `count` packets are in, or after `timeoutMs` with what came. */
  waitFor(count: number, timeoutMs: number): Promise<ReceivedRtp[]>;
  close(): Promise<void>;
}

export async function startRtpSink(host = '127.0.0.1'): Promise<RtpSink> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const packets: ReceivedRtp[] = [];
  let wake: (() => void) | null = null;
  socket.on('message', (data, from) => {
    if (data.length < 12 || data[0]! >> 6 !== 2) return;
    const csrcBytes = (data[0]! & 0x0f) * 4;
    packets.push({
      from: { address: from.address, port: from.port },
      at: performance.now(),
      payloadType: data[1]! & 0x7f,
      marker: (data[1]! & 0x80) !== 0,
      sequence: data.readUInt16BE(2),
      timestamp: data.readUInt32BE(4),
      ssrc: data.readUInt32BE(8),
      payload: data.subarray(12 + csrcBytes),
    });
    wake?.();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => resolve());
  });
  return {
    port: socket.address().port,
    packets,
    waitFor: async (count, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (packets.length < count && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(100, deadline - Date.now()));
        });
        wake = null;
      }
      return packets;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
