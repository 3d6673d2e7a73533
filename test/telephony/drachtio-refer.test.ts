/**
 * Blind transfer and hangup reasons through drachtio-server: the REFER goes out through
 * drachtio-srf's dialog request API with Refer-To, Referred-By and extra headers, the caller's
 * NOTIFYs come back through the dialog's `notify` event, and the BYE carries a Q.850 Reason.
 * The far side is the fake drachtio-server of the other drachtio tests, which sends NOTIFY
 * without Event and Subscription-State headers (it writes only a body): the outcome then rests
 * on the sipfrag alone.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallDialog } from '../../src/telephony/call/call-dialog.js';
import { DrachtioSignalling } from '../../src/telephony/drachtio/drachtio-signalling.js';
import { FakeDrachtio, type AppSipMessage, type FakeCall } from '../helpers/fake-drachtio.js';

const SECRET = 'refer-secret';
const TARGET = 'sip:+41441234567@192.0.2.10:5060';
const SDP = 'v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n';
const ANSWER = { contentType: 'application/sdp', body: Buffer.from(SDP.replace('6000', '7000')) };

let fake: FakeDrachtio;
let signalling: DrachtioSignalling;
let nextDialog: (dialog: CallDialog) => void = () => {};

beforeAll(async () => {
  fake = await FakeDrachtio.start({ secret: SECRET });
  signalling = await DrachtioSignalling.connect({ host: '127.0.0.1', port: fake.port, secret: SECRET, logger: pino({ level: 'silent' }), admit: () => null });
  signalling.onCall((dialog) => nextDialog(dialog));
  await fake.ready();
});
afterAll(async () => {
  await signalling?.close();
  await fake?.close();
});

const requestIn = (call: FakeCall, method: string) => (message: AppSipMessage) =>
  message.callId === call.callId && message.written.kind === 'request' && message.written.method === method;
const responseTo = (call: FakeCall, status: number, method: string) => (message: AppSipMessage) =>
  message.callId === call.callId &&
  message.written.kind === 'response' &&
  message.written.status === status &&
  (message.sent?.headers.get('CSeq') ?? '').endsWith(method);

/** A call from the fake network, answered and acknowledged. */
async function answeredCall(): Promise<{ call: FakeCall; dialog: CallDialog }> {
  const dialog = new Promise<CallDialog>((resolve) => (nextDialog = resolve));
  const call = fake.invite({ number: '100', sdp: SDP });
  const answered = (await dialog).accept(ANSWER);
  await fake.next(responseTo(call, 200, 'INVITE'));
  fake.ack(call);
  await answered;
  return { call, dialog: await dialog };
}

/** Hangs up with a reason and answers the BYE; returns the BYE as the app wrote it. */
async function hangUp(call: FakeCall, dialog: CallDialog, reason: string): Promise<AppSipMessage> {
  const hungUp = dialog.hangup(reason);
  const bye = await fake.next(requestIn(call, 'BYE'));
  fake.respond(bye, 200);
  await hungUp;
  return bye;
}

describe('REFER through drachtio-server (fake)', () => {
  it('sends the REFER, reads the NOTIFYs and hangs up with a Reason', async () => {
    const { call, dialog } = await answeredCall();
    const outcome = dialog.refer(TARGET, { headers: [['X-Transfer-Reason', 'queue 7']] });
    const refer = await fake.next(requestIn(call, 'REFER'));
    expect(refer.written.headers.get('Refer-To')).toBe(`<${TARGET}>`);
    expect(refer.written.headers.get('Referred-By')).toBe('<sip:100@127.0.0.1>');
    expect(refer.written.headers.get('X-Transfer-Reason')).toBe('queue 7');
    fake.respond(refer, 202, 'Accepted');
    const from = fake.fromApp.length;
    fake.request(call, 'NOTIFY', { contentType: 'message/sipfrag', text: 'SIP/2.0 180 Ringing\r\n' });
    await fake.next(responseTo(call, 200, 'NOTIFY'), from);
    fake.request(call, 'NOTIFY', { contentType: 'message/sipfrag', text: 'SIP/2.0 200 OK\r\n' });
    expect(await outcome).toEqual({ result: 'transferred', status: 200 });
    const bye = await hangUp(call, dialog, 'transferred');
    expect(bye.written.headers.get('Reason')).toBe('Q.850;cause=16;text="transferred"');
  });

  it('reports a declined REFER as refused, and a busy target as failed', async () => {
    const first = await answeredCall();
    const refused = first.dialog.refer(TARGET);
    fake.respond(await fake.next(requestIn(first.call, 'REFER')), 603, 'Decline');
    expect(await refused).toEqual({ result: 'refused', status: 603 });
    await hangUp(first.call, first.dialog, 'refused');

    const second = await answeredCall();
    const failed = second.dialog.refer(TARGET);
    fake.respond(await fake.next(requestIn(second.call, 'REFER')), 202, 'Accepted');
    fake.request(second.call, 'NOTIFY', { contentType: 'message/sipfrag', text: 'SIP/2.0 486 Busy Here\r\n' });
    expect(await failed).toEqual({ result: 'failed', status: 486 });
    await hangUp(second.call, second.dialog, 'busy');
  });

  it('gives up on a final NOTIFY that never comes', async () => {
    const { call, dialog } = await answeredCall();
    const outcome = dialog.refer(TARGET, { timeoutMs: 300 });
    fake.respond(await fake.next(requestIn(call, 'REFER')), 202, 'Accepted');
    expect(await outcome).toEqual({ result: 'failed', status: null });
    await hangUp(call, dialog, 'no report');
  });
});
