/**
 * The drain of a real `sprachrohr serve` process on SIGTERM, against its embedded SIP stack:
 * while it drains, OPTIONS and new INVITEs get 503 with Retry-After, `/readyz` turns 503, the
 * metrics still answer; the calls running go on — one until its caller hangs up, the other
 * until the drain's deadline, when the gateway hangs it up — and then the process exits 0.
 * Timing is checked only against bounds a loaded machine keeps (the deadline is a floor).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipResponse } from '../../src/telephony/sip/sip-message.js';
import { CLI } from '../helpers/cli.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { Peer, request, response, sipRequest } from '../helpers/sip-peer.js';
import { anyNumberDialplan } from '../helpers/started-telephony.js';

const METRICS_TOKEN = 'drain-test-metrics-token';
const DRAIN_TIMEOUT_MS = 4000;

/** Every number: answered, then the caller is held until a key (never sent) or the hang-up. */
const DIALPLAN = anyNumberDialplan(`      - answer: {}
      - listen: { speech: false, dtmf: true, timeout_ms: 60000, max_ms: 120000 }
      - hangup: {}`);

const offer = (rtpPort: number) =>
  `v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtpPort} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\n`;
const toTagOf = (message: SipResponse) => /tag=([^;]+)/.exec(message.headers.get('To')!)![1]!;
const isResponse = (status: number, method: string, callId: string) => (message: Parameters<ReturnType<typeof request>>[0]) =>
  response(status, method)(message) && message.headers.get('Call-ID') === callId;

/** A serve process, its addresses and output. */
interface Served {
  readonly child: ChildProcessWithoutNullStreams;
  readonly http: string;
  readonly sipPort: number;
  readonly exited: Promise<{ code: number | null; atMs: number }>;
  output(): string;
}

/** Starts `sprachrohr serve` and waits (up to a minute: a loaded machine starts slowly) until it takes calls. */
function serve(env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, SPRACHROHR_PORT: '0', SPRACHROHR_SIP_PORT: '0', ...env } });
    let output = '';
    const exited = new Promise<{ code: number | null; atMs: number }>((done) => child.on('close', (code) => done({ code, atMs: performance.now() })));
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const address = /"address":"(http:\/\/[^"]+)"/.exec(output);
      const sip = /"sip":\{"udp":(\d+)/.exec(output);
      if (address && sip) {
        clearTimeout(timer);
        resolve({ child, http: address[1]!, sipPort: Number(sip[1]), exited, output: () => output });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

describe('sprachrohr serve drains on SIGTERM', () => {
  let dir: string;
  let served: Served;
  let sip: Peer & { close(): void };
  let media: dgram.Socket;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-drain-'));
    await fs.mkdir(path.join(dir, 'dialplans'));
    await fs.writeFile(path.join(dir, 'dialplans', 'drain.yaml'), DIALPLAN);
    served = await serve({
      SPRACHROHR_DATA_DIR: path.join(dir, 'data'),
      SPRACHROHR_DIALPLANS_DIR: path.join(dir, 'dialplans'),
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_RTP_PORTS: '33400-33499',
      SPRACHROHR_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
      SPRACHROHR_METRICS_TOKEN: METRICS_TOKEN,
    });
    sip = await Peer.udp(served.sipPort);
    media = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => media.bind(0, '127.0.0.1', resolve));
  }, 90_000);

  afterAll(async () => {
    sip?.close();
    media?.close();
    if (served && served.child.exitCode === null) served.child.kill('SIGKILL');
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const get = async (url: string, headers: Record<string, string> = {}) => {
    const answer = await fetch(`${served.http}${url}`, { headers });
    return { status: answer.status, headers: answer.headers, text: await answer.text() };
  };
  const metrics = async () => {
    const answer = await get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(answer.status).toBe(200);
    return parsePrometheusText(answer.text);
  };
  const call = async (callId: string): Promise<string> => {
    sip.write(sipRequest(sip, 'INVITE', { callId, cseq: 1, body: offer(media.address().port) }));
    const ok = (await sip.next(isResponse(200, 'INVITE', callId), 0, 15_000)) as SipResponse;
    const toTag = toTagOf(ok);
    sip.write(sipRequest(sip, 'ACK', { callId, cseq: 1, toTag }));
    return toTag;
  };

  it('refuses new calls and OPTIONS with 503, lets the calls run, ends the last at the deadline and exits 0', async () => {
    expect((await get('/readyz')).status).toBe(200);
    const options = () => {
      const callId = `options-${Math.random()}`;
      sip.write(sipRequest(sip, 'OPTIONS', { callId, cseq: 1 }));
      return callId;
    };
    await sip.next(isResponse(200, 'OPTIONS', options()), 0, 10_000);

    const firstTag = await call('drain-first');
    const secondTag = await call('drain-second');
    expect((await metrics()).value('sprachrohr_calls_active')).toBe(2);

    const signalledAt = performance.now();
    served.child.kill('SIGTERM');
    // The drain has begun once /readyz says so.
    for (let ready = 200; ready === 200;) {
      const answer = await get('/readyz');
      ready = answer.status;
      if (ready === 503) expect(JSON.parse(answer.text).reasons.join(' ')).toMatch(/draining .*SIGTERM/);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const during = options();
    const refusedOptions = (await sip.next(isResponse(503, 'OPTIONS', during), 0, 10_000)) as SipResponse;
    expect(refusedOptions.headers.get('Retry-After')).toBe('5');
    sip.write(sipRequest(sip, 'INVITE', { callId: 'drain-late', cseq: 1, body: offer(media.address().port) }));
    const refusedInvite = (await sip.next(isResponse(503, 'INVITE', 'drain-late'), 0, 10_000)) as SipResponse;
    expect(refusedInvite.headers.get('Retry-After')).toBe('5');
    sip.write(sipRequest(sip, 'ACK', { callId: 'drain-late', cseq: 1, toTag: toTagOf(refusedInvite) }));

    // The calls go on: each answers a request inside it.
    for (const [callId, toTag] of [
      ['drain-first', firstTag],
      ['drain-second', secondTag],
    ] as const) {
      sip.write(sipRequest(sip, 'OPTIONS', { callId, cseq: 2, toTag }));
      await sip.next(isResponse(200, 'OPTIONS', callId), 0, 10_000);
    }
    const draining = await metrics();
    expect(draining.value('sprachrohr_draining')).toBe(1);
    expect(draining.value('sprachrohr_calls_active')).toBe(2);

    // The first caller hangs up; the process keeps running for the second call.
    sip.write(sipRequest(sip, 'BYE', { callId: 'drain-first', cseq: 3, toTag: firstTag }));
    await sip.next(isResponse(200, 'BYE', 'drain-first'), 0, 10_000);
    const oneLeft = await metrics();
    expect(oneLeft.value('sprachrohr_calls_total', { direction: 'inbound', outcome: 'bye' })).toBe(1);
    expect(oneLeft.value('sprachrohr_calls_active')).toBe(1);
    expect(served.child.exitCode).toBe(null);

    // At the deadline the gateway hangs up the second call, then the process exits.
    const bye = await sip.next((m) => request('BYE')(m) && m.headers.get('Call-ID') === 'drain-second', 0, DRAIN_TIMEOUT_MS + 30_000);
    const byeAt = performance.now();
    sip.write(
      `SIP/2.0 200 OK\r\nVia: ${bye.headers.get('Via')}\r\nFrom: ${bye.headers.get('From')}\r\nTo: ${bye.headers.get('To')}\r\nCall-ID: drain-second\r\nCSeq: ${bye.headers.get('CSeq')}\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(byeAt - signalledAt).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_MS - 100);
    const { code, atMs } = await served.exited;
    expect(code).toBe(0);
    expect(atMs - signalledAt).toBeLessThan(DRAIN_TIMEOUT_MS + 30_000);
    const log = served.output();
    expect(log).toContain('drain deadline reached');
    expect(log).toContain('"calls":1');
  }, 120_000);
});
