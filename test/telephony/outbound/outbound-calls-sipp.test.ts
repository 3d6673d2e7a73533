/**
 * Calls placed the way `POST /v1/calls` places them, with SIPp (Debian `sip-tester`) as the
 * callee: answered after 180 and 183 with early media, the route's speech arriving as RTP at
 * the callee, the callee hanging up; busy (486), declined (603), no answer within the ring
 * timeout (CANCEL), and hung up through the API while it rings. Status events go to a real
 * HTTP server on loopback and are checked against their signature. Orders with bad input are
 * refused before anything is sent.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackAllowList } from '../../../src/jobs/callback-target.js';
import { CallOrderError, type CallOrder } from '../../../src/telephony/outbound/call-order.js';
import { CallStatusSender } from '../../../src/telephony/outbound/call-status-events.js';
import { orderUrlCheck } from '../../../src/telephony/outbound/order-url-check.js';
import type { PlacedCallRecord } from '../../../src/telephony/outbound/placed-call-record.js';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { writeSippCaptures, type SippCaptures } from '../../integration/sipp/make-pcap.js';
import { eventually } from '../../helpers/eventually.js';
import { assertSippPassed, sippScenario, startRtpSink, startSippServer } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

const SECRET = 'status-secret-of-the-account-0123456789';
const owner = { keyId: 'key_1', accountId: 'acct_a' };
const reminder = [
  'name: reminder',
  'routes:',
  '  - number: reminder',
  '    engines: synthetic',
  '    language: de-CH',
  '    voice: anna',
  '    steps:',
  '      - say: { text: "Guten Tag {{name}}, hier ist die Praxis Müller. Wir erinnern Sie an Ihren Termin morgen um neun Uhr. Bitte rufen Sie uns zurück, falls Sie ihn nicht wahrnehmen können." }',
  '      - say: { text: "Auf Wiederhören." }',
  '      - hangup: {}',
].join('\n');

interface StatusEvent {
  readonly event: string;
  readonly call: { readonly id: string; readonly state: string };
  readonly signed: boolean;
}

const announcementRoute = [
  'name: announcement',
  'routes:',
  '  - number: announcement',
  '    engines: synthetic',
  '    language: de-CH',
  '    voice: anna',
  '    steps:',
  '      - listen: { timeout_ms: 5000 }',
  '      - say: { text: "Guten Tag." }',
  '      - hangup: {}',
].join('\n');

let telephony: StartedTelephony;
let captures: SippCaptures;
const { logger, logs } = capturedLogger();
let statusServer: http.Server;
let statusUrl: string;
const events: StatusEvent[] = [];

beforeAll(async () => {
  statusServer = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const timestamp = String(request.headers['x-speech-webhook-timestamp']);
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}`;
      const parsed = JSON.parse(body) as Omit<StatusEvent, 'signed'>;
      events.push({ ...parsed, signed: request.headers['x-speech-webhook-signature'] === expected });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => statusServer.listen(0, '127.0.0.1', resolve));
  statusUrl = `http://127.0.0.1:${(statusServer.address() as { port: number }).port}/status`;
  const allow = new CallbackAllowList(['127.0.0.0/8']);
  captures = await writeSippCaptures(await fs.mkdtemp(path.join(os.tmpdir(), 'outbound-captures-')));
  telephony = await startTelephony(
    anyNumberDialplan('      - hangup: {}'),
    // The bot's call runs on the live engines: eSpeak NG and pocketsphinx (English).
    { SPRACHROHR_RTP_PORTS: '43200-43239', SPRACHROHR_CALLS_PER_KEY: '3', SPRACHROHR_TTS_ENGINE: 'espeak', SPRACHROHR_STT_ENGINE: 'pocketsphinx' },
    {
      logger,
      files: { 'reminder.yaml': reminder, 'announcement.yaml': announcementRoute },
      outbound: {
        status: new CallStatusSender({ allow, secretOf: async () => SECRET, logger: pino({ level: 'silent' }), retryDelaysMs: [] }),
        checkUrl: orderUrlCheck(allow),
        accountSecret: async () => SECRET,
      },
    },
  );
});
afterAll(async () => {
  await telephony?.close();
  await new Promise((resolve) => statusServer?.close(resolve));
});

/** Places a call to SIPp at `address` and waits until it is over. */
async function callUntilOver(order: Omit<CallOrder, 'to'>, address: string, ms = 15_000): Promise<PlacedCallRecord> {
  const record = await telephony.service.dialer.place({ to: `sip:callee@${address}`, ...order }, owner);
  expect(record.state).toBe('queued');
  await eventually(() => record.state === 'completed' || record.state === 'failed', ms, `call ${record.id} to be over (${record.state})`);
  return record;
}

const eventsOf = (id: string): StatusEvent[] => events.filter((event) => event.call.id === id);

describe('calls placed through the API', () => {
  it("is answered after early media, speaks the route to the callee's RTP port and ends when the callee hangs up", async () => {
    const sink = await startRtpSink();
    try {
      const callee = await startSippServer({
        scenario: sippScenario('api-callee.uas.xml'),
        calls: 1,
        timeoutMs: 20_000,
        variables: { rtp_port: String(sink.port) },
      });
      const record = await callUntilOver({ dialplan: 'reminder', variables: { name: 'Meier' }, status_url: statusUrl }, callee.address);
      assertSippPassed(await callee.result);
      expect(record).toMatchObject({
        state: 'completed',
        sipStatus: 200,
        cause: null,
        earlyMedia: true,
        endedBy: 'callee',
        runs: { dialplan: 'reminder.yaml', route: 'reminder' },
      });
      expect(record.ringingAt!.getTime()).toBeLessThanOrEqual(record.answeredAt!.getTime());
      expect(record.answeredAt!.getTime() - record.createdAt.getTime()).toBeGreaterThanOrEqual(350);
      // The callee listened 2.5 s: the route's speech came as PCMU, 20 ms a packet.
      const spoken = sink.packets.filter((packet) => packet.payloadType === 0);
      expect(spoken.length).toBeGreaterThan(60);
      expect(spoken.every((packet) => packet.payload.length === 160)).toBe(true);
      await eventually(() => eventsOf(record.id).length >= 3, 5000, 'three status events');
      expect(eventsOf(record.id).map((event) => event.event)).toEqual(['ringing', 'answered', 'completed']);
      expect(eventsOf(record.id).every((event) => event.signed)).toBe(true);
      expect(eventsOf(record.id).map((event) => event.call.state)).toEqual(['ringing', 'answered', 'completed']);
    } finally {
      await sink.close();
    }
  }, 30_000);

  it("lets the route listen to the callee's early media, holds its speech for an answer that never comes, and ends with the refusal", async () => {
    const network = await startSippServer({
      scenario: sippScenario('early-media-announcement.uas.xml'),
      calls: 1,
      timeoutMs: 20_000,
      variables: { speech_pcap: captures.speechPcap },
    });
    const record = await callUntilOver({ dialplan: 'announcement', listen_early_media: true }, network.address);
    assertSippPassed(await network.result);
    expect(record).toMatchObject({ state: 'failed', sipStatus: 480, cause: 'no_answer', earlyMedia: true, answeredAt: null });
    // The listen step heard the announcement (the synthetic recogniser's transcript of it) before any answer.
    const listened = logs.filter((line) => line['msg'] === 'listened' && line['callId'] === record.sipCallId);
    expect(listened).toHaveLength(1);
    expect(listened[0]!['reason']).not.toBe('timeout');
    expect(String(listened[0]!['heard'])).toMatch(/Sandbox/);
  }, 30_000);

  it("runs a stream bot once answered, its connection signed with the account's webhook secret", async () => {
    const bot = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => bot.once('listening', resolve));
    const url = `ws://127.0.0.1:${(bot.address() as { port: number }).port}/bot`;
    const seen: { signed: boolean; messages: Array<Record<string, unknown>> } = { signed: false, messages: [] };
    bot.on('connection', (socket, request) => {
      const timestamp = String(request.headers['x-speech-webhook-timestamp']);
      seen.signed = request.headers['x-speech-webhook-signature'] === `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${url}`).digest('hex')}`;
      socket.on('message', (data: Buffer) => seen.messages.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>));
    });
    const sink = await startRtpSink();
    try {
      const callee = await startSippServer({
        scenario: sippScenario('api-callee.uas.xml'),
        calls: 1,
        timeoutMs: 20_000,
        variables: { rtp_port: String(sink.port) },
      });
      const record = await callUntilOver(
        { bot: { stream: { url, mode: 'text' } }, language: 'en', voice: 'jonas', variables: { ticket: 'T-42' } },
        callee.address,
      );
      assertSippPassed(await callee.result);
      expect(record).toMatchObject({ state: 'completed', runs: { bot: 'stream' }, endedBy: 'callee' });
      expect(seen.signed).toBe(true);
      await eventually(() => seen.messages.some((message) => message['type'] === 'session.end'), 3000, 'the end of the bot session');
      const start = seen.messages[0]!;
      expect(start).toMatchObject({ type: 'session.start', language: 'en', voice: 'jonas', call: { called: `sip:callee@${callee.address}` } });
      expect(start['variables']).toMatchObject({ ticket: 'T-42' });
      expect(seen.messages.at(-1)).toMatchObject({ type: 'session.end', reason: 'hangup' });
    } finally {
      await sink.close();
      await new Promise((resolve) => bot.close(resolve));
    }
  }, 30_000);

  it('fails busy on 486 after ringing, declined on 603', async () => {
    const busy = await startSippServer({ scenario: sippScenario('outbound-busy.uas.xml'), calls: 1, timeoutMs: 15_000 });
    const busyCall = await callUntilOver({ dialplan: 'reminder', status_url: statusUrl }, busy.address);
    assertSippPassed(await busy.result);
    expect(busyCall).toMatchObject({ state: 'failed', sipStatus: 486, cause: 'busy', answeredAt: null });
    expect(busyCall.ringingAt).not.toBeNull();
    await eventually(() => eventsOf(busyCall.id).length >= 2, 5000, 'two status events');
    expect(eventsOf(busyCall.id).map((event) => event.event)).toEqual(['ringing', 'failed']);

    const decline = await startSippServer({ scenario: sippScenario('outbound-decline.uas.xml'), calls: 1, timeoutMs: 15_000 });
    const declined = await callUntilOver({ dialplan: 'reminder' }, decline.address);
    assertSippPassed(await decline.result);
    expect(declined).toMatchObject({ state: 'failed', sipStatus: 603, cause: 'declined', ringingAt: null });
  }, 30_000);

  it('is cancelled when nobody answers within the ring timeout, and when hung up through the API while it rings', async () => {
    const ringing = await startSippServer({ scenario: sippScenario('cancel.uas.xml'), calls: 1, timeoutMs: 15_000 });
    const started = performance.now();
    const unanswered = await callUntilOver({ dialplan: 'reminder', ring_timeout_s: 2 }, ringing.address);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
    assertSippPassed(await ringing.result);
    expect(unanswered).toMatchObject({ state: 'failed', cause: 'no_answer', sipStatus: null });

    const ringingAgain = await startSippServer({ scenario: sippScenario('cancel.uas.xml'), calls: 1, timeoutMs: 15_000 });
    const record = await telephony.service.dialer.place({ to: `sip:callee@${ringingAgain.address}`, dialplan: 'reminder' }, owner);
    await eventually(() => record.state === 'ringing', 5000, 'ringing');
    const hungUp = await telephony.service.dialer.hangup(owner.accountId, record.id);
    expect(hungUp).toMatchObject({ state: 'failed', cause: 'cancelled' });
    assertSippPassed(await ringingAgain.result);
    // Another account sees none of it.
    expect(telephony.service.dialer.get('acct_b', record.id)).toBeUndefined();
    expect(await telephony.service.dialer.hangup('acct_b', record.id)).toBeUndefined();
    expect(telephony.service.dialer.list(owner.accountId, 10).map((call) => call.id)).toContain(record.id);
  }, 30_000);
});

describe('orders the dialer refuses', () => {
  const refusal = async (order: CallOrder): Promise<CallOrderError> => {
    const error = await telephony.service.dialer.place(order, owner).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CallOrderError);
    return error as CallOrderError;
  };

  it('names what is wrong with the number, the trunk, the dialplan, the route, the bot and the URLs', async () => {
    const cases: Array<[CallOrder, RegExp]> = [
      [{ to: '0441234567', dialplan: 'reminder' }, /neither an E\.164 number .* nor a SIP URI/],
      [{ to: '+41441234567', dialplan: 'reminder' }, /is a number: name the trunk/],
      [{ to: 'sip:a@127.0.0.1', trunk: 'nope', dialplan: 'reminder' }, /no trunk "nope" in trunks\.yaml \(there are no trunks\)/],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'nope' }, /no dialplan "nope" in the dialplans folder \(files: announcement\.yaml, reminder\.yaml, test\.yaml\)/],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'reminder', route: '999' }, /has no route "999" \(routes: reminder\)/],
      [{ to: 'sip:a@127.0.0.1' }, /either dialplan .* or bot/],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'reminder', bot: { stream: { url: 'ws://127.0.0.1:9/bot' } } }, /either dialplan .* or bot/],
      [{ to: 'sip:a@127.0.0.1', bot: { say: { text: 'x' } } }, /bot is one webhook or stream step/],
      [{ to: 'sip:a@127.0.0.1', bot: { stream: { url: 'ftp://x' } } }, /^bot: stream\/url must match/],
      [
        { to: 'sip:a@127.0.0.1', bot: { stream: { url: 'ws://10.1.2.3/bot' } } },
        /the bot url's host 10\.1\.2\.3 resolves to 10\.1\.2\.3, which is not a public address/,
      ],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'reminder', listen_early_media: true, machine_detection: 'detect' }, /do not go together/],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'reminder', from: 'Hotline' }, /from "Hotline" is neither/],
      [{ to: 'sip:a@127.0.0.1', dialplan: 'reminder', status_url: 'http://169.254.169.254/latest' }, /status_url's host .* is not a public address/],
    ];
    for (const [order, detail] of cases) {
      const error = await refusal(order);
      expect(error.problem, JSON.stringify(order)).toBe('invalid');
      expect(error.message, JSON.stringify(order)).toMatch(detail);
    }
    expect(telephony.service.dialer.size).toBe(0);
  });

  it('holds a key to its calls at once (SPRACHROHR_CALLS_PER_KEY)', async () => {
    const ringing = await startSippServer({ scenario: sippScenario('cancel.uas.xml'), calls: 3, timeoutMs: 20_000 });
    const placed: PlacedCallRecord[] = [];
    for (let i = 0; i < 3; i += 1) placed.push(await telephony.service.dialer.place({ to: `sip:callee@${ringing.address}`, dialplan: 'reminder' }, owner));
    const error = await refusal({ to: `sip:callee@${ringing.address}`, dialplan: 'reminder' });
    expect(error.problem).toBe('key_limit');
    expect(error.retryAfterSeconds).toBeGreaterThan(0);
    // Another key of the account has its own allowance.
    await expect(telephony.service.dialer.place({ to: 'sip:a@127.0.0.1', dialplan: 'nope' }, { ...owner, keyId: 'key_2' })).rejects.toThrow(/no dialplan/);
    await eventually(() => placed.every((call) => call.state === 'ringing'), 5000, 'three calls ringing');
    for (const call of placed) await telephony.service.dialer.hangup(owner.accountId, call.id);
    expect(placed.map((call) => [call.cause, call.ringingAt !== null])).toEqual([
      ['cancelled', true],
      ['cancelled', true],
      ['cancelled', true],
    ]);
    assertSippPassed(await ringing.result, 3);
  }, 30_000);
});
