/**
 * Session timers (RFC 4028) on the calls the endpoint places: the headers read (unit), and
 * against SIPp as the callee: the refreshes we send when the 2xx makes us the refresher
 * (re-INVITE, or UPDATE when the callee allows it), the BYE when the callee was to refresh and
 * did not (and not before, when it did), the INVITE sent again after a 422 with the interval
 * raised, and the call hung up when a refresh is answered 481.
 */
import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SipEndpoint } from '../../../src/telephony/sip/sip-endpoint.js';
import { SipHeaders } from '../../../src/telephony/sip/sip-message.js';
import type { OutboundCallRequest } from '../../../src/telephony/sip/sip-outbound-call.js';
import type { OutboundDialog } from '../../../src/telephony/sip/sip-outbound-dialog.js';
import {
  askForSessionTimer,
  checkedSessionInterval,
  parseMinSe,
  parseSessionExpires,
  raisedAfter422,
  sessionExpiresOf,
} from '../../../src/telephony/sip/session-timer.js';
import { assertSippPassed, removeSippRuns, requireSipp, sippScenario, startSippServer, type SippRun } from '../../helpers/sipp.js';

describe('session timer headers', () => {
  it('reads Session-Expires with and without a refresher', () => {
    expect(parseSessionExpires('1800')).toEqual({ seconds: 1800, refresher: null });
    expect(parseSessionExpires(' 4 ; refresher=UAC')).toEqual({ seconds: 4, refresher: 'uac' });
    expect(parseSessionExpires('90;foo=bar;refresher=uas')).toEqual({ seconds: 90, refresher: 'uas' });
    expect(parseSessionExpires('90;refresher=proxy')).toEqual({ seconds: 90, refresher: null });
    // Beyond what a Node timer can wait: the longest kept.
    expect(parseSessionExpires('9999999999')?.seconds).toBe(2_000_000);
    for (const bad of [undefined, '', '0', '-5', '1.5', 'abc', '12 34', ';refresher=uac']) expect(parseSessionExpires(bad)).toBeNull();
  });

  it('reads Min-SE, and the compact form x of Session-Expires', () => {
    expect(parseMinSe('120')).toBe(120);
    expect(parseMinSe(' 90;x=y')).toBe(90);
    expect(parseMinSe(undefined)).toBeNull();
    expect(parseMinSe('soon')).toBeNull();
    expect(sessionExpiresOf({ headers: new SipHeaders([['x', '600;refresher=uas']]) })).toEqual({ seconds: 600, refresher: 'uas' });
    expect(sessionExpiresOf({ headers: new SipHeaders() })).toBeNull();
  });

  it('asks for a timer in one Supported header, merged with the application’s', () => {
    const headers = new SipHeaders([
      ['Supported', '100rel'],
      ['k', 'replaces'],
    ]);
    askForSessionTimer(headers, 1800);
    expect(headers.lines().filter(({ name }) => /^(supported|k)$/i.test(name))).toEqual([{ name: 'Supported', value: '100rel, replaces, timer' }]);
    expect(headers.get('Session-Expires')).toBe('1800');
    expect(headers.get('Min-SE')).toBe('90');
    const already = new SipHeaders([['Supported', 'timer']]);
    askForSessionTimer(already, 90);
    expect(already.getAll('Supported')).toEqual(['timer']);
  });

  it('checks the interval asked for', () => {
    expect(checkedSessionInterval()).toBe(1800);
    expect(checkedSessionInterval(0)).toBe(0);
    expect(checkedSessionInterval(90)).toBe(90);
    for (const bad of [89, 1, -1, 120.5, Number.NaN, 3_000_000]) expect(() => checkedSessionInterval(bad)).toThrow(RangeError);
  });

  it('raises the interval to a 422’s Min-SE, and only when it asks for more', () => {
    const invite = { kind: 'request', method: 'INVITE', uri: 'sip:a@b', headers: new SipHeaders([['Session-Expires', '90']]), body: Buffer.alloc(0) } as const;
    const answer = (minSe?: string) =>
      ({
        kind: 'response',
        status: 422,
        reason: 'Session Interval Too Small',
        headers: new SipHeaders(minSe ? [['Min-SE', minSe]] : []),
        body: Buffer.alloc(0),
      }) as const;
    expect(raisedAfter422(invite, answer('120'))).toEqual([
      ['Session-Expires', '120'],
      ['Min-SE', '120'],
    ]);
    expect(raisedAfter422(invite, answer('90'))).toBeNull();
    expect(raisedAfter422(invite, answer())).toBeNull();
  });
});

const TIMERS = { t1Ms: 100, t2Ms: 800, t4Ms: 500 };
const CALLER_ID = '<sip:+41445550000@127.0.0.1>';
const OFFER = {
  contentType: 'application/sdp',
  body: Buffer.from('v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 7000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n'),
};

let endpoint: SipEndpoint;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Places a call to SIPp playing `scenario` as the callee; throws unless it is answered. */
async function answeredCall(scenario: string, extra: Partial<OutboundCallRequest> = {}): Promise<{ run: SippRun; dialog: OutboundDialog }> {
  const run = await startSippServer({ scenario: sippScenario(scenario), calls: 1, timeoutMs: 15_000 });
  const result = await endpoint.placeCall({ target: `sip:+41441234567@${run.address}`, from: CALLER_ID, offer: OFFER, ringTimeoutMs: 5000, ...extra });
  if (!('answered' in result)) throw new Error(`the call was not answered: ${JSON.stringify(result)}`);
  return { run, dialog: result.answered };
}

/** A call kept up for `ms`, then hung up; when SIPp received each `method` (see {@link receivedAt}). */
async function refreshedFor(scenario: string, ms: number, method: string): Promise<number[]> {
  const { run, dialog } = await answeredCall(scenario);
  await sleep(ms);
  expect(dialog.ended).toBe(false);
  await dialog.hangup('done');
  assertSippPassed(await run.result);
  return receivedAt(run, method);
}

/** Resolves with why the dialog ended, and after how many ms. */
function endOf(dialog: OutboundDialog): Promise<{ reason: string; afterMs: number }> {
  const since = performance.now();
  return new Promise((resolve) => dialog.once('ended', (reason) => resolve({ reason, afterMs: performance.now() - since })));
}

/** When SIPp received each request of `method`, in ms since it received the first message of the log. */
async function receivedAt(run: SippRun, method: string): Promise<number[]> {
  const log = await readFile(run.files.messages, 'latin1');
  const times: number[] = [];
  let start: number | null = null;
  for (const part of log.split(/^(?=-{10,})/m)) {
    const stamp = /^-{10,}\s+(\d{4}-\d\d-\d\d)\s+(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(part);
    if (!stamp || !/message received/.test(part)) continue;
    const at = Date.parse(`${stamp[1]}T${stamp[2]!.slice(0, 12)}Z`);
    start ??= at;
    if (new RegExp(`^${method} sip:`, 'm').test(part)) times.push(at - start);
  }
  return times;
}

describe('session timers of the calls the endpoint places, with SIPp as the callee', () => {
  beforeAll(async () => {
    await requireSipp();
    endpoint = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), timers: TIMERS, allowSource: () => false });
    await endpoint.listen();
  });
  afterAll(async () => {
    await endpoint?.close();
    await removeSippRuns();
  });

  it('refreshes with a re-INVITE at half the interval the 2xx set (refresher=uac), again after its 200', async () => {
    // Session-Expires: 4: refreshes 2 and 4 s after the answer; hung up before the third.
    const [invite, first, second] = await refreshedFor('session-timer-refresh.uas.xml', 5000, 'INVITE');
    expect(first! - invite!).toBeGreaterThan(1800);
    expect(first! - invite!).toBeLessThan(2600);
    expect(second! - first!).toBeGreaterThan(1800);
    expect(second! - first!).toBeLessThan(2600);
  });

  it('refreshes with an UPDATE without a body when the callee allows UPDATE', async () => {
    // Session-Expires: 2: refreshes 1 and 2 s after the answer.
    const updates = await refreshedFor('session-timer-update.uas.xml', 2500, 'UPDATE');
    expect(updates).toHaveLength(2);
    expect(updates[1]! - updates[0]!).toBeGreaterThan(800);
  });

  it('hangs up a third of the interval before the session expires when the callee was to refresh and did not', async () => {
    const { run, dialog } = await answeredCall('session-timer-watch.uas.xml');
    const { reason, afterMs } = await endOf(dialog);
    // Session-Expires: 3, refresher=uas: BYE at 3 − min(32, 3/3) = 2 s.
    expect(reason).toBe('hangup');
    expect(afterMs).toBeGreaterThan(1800);
    expect(afterMs).toBeLessThan(2600);
    assertSippPassed(await run.result);
  });

  it('answers the callee’s refresh with its Session-Expires and Require: timer, and counts the interval from it', async () => {
    const { run, dialog } = await answeredCall('session-timer-callee-refreshes.uas.xml');
    const { afterMs } = await endOf(dialog);
    // The UPDATE a second after the answer starts the 3 s again: BYE 2 s after it.
    expect(afterMs).toBeGreaterThan(2700);
    expect(afterMs).toBeLessThan(3600);
    assertSippPassed(await run.result);
  });

  it('sends the INVITE again after a 422, asking for the Min-SE, and is answered', async () => {
    const { run, dialog } = await answeredCall('session-timer-422.uas.xml', { sessionExpiresS: 90 });
    await dialog.hangup('done');
    assertSippPassed(await run.result);
  });

  it('hangs up when its refresh is answered 481', async () => {
    const { run, dialog } = await answeredCall('session-timer-refresh-481.uas.xml');
    const { reason, afterMs } = await endOf(dialog);
    // Session-Expires: 2: the refresh after 1 s, its 481, BYE.
    expect(reason).toBe('hangup');
    expect(afterMs).toBeLessThan(1600);
    assertSippPassed(await run.result);
    expect(endpoint.outboundCalls).toBe(0);
  });
});
