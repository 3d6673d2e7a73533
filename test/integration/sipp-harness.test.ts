/**
 * The SIPp harness checks itself: every caller scenario of test/integration/sipp/ runs against
 * SIPp as the called side (its built-in `uas`, or the `*.uas.xml` peer written for the flow),
 * and the RTP that the scenarios play is received and taken apart. No gateway is involved;
 * these tests make sure that a failing gateway test means a failing gateway.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_UDP_PAYLOAD,
  assertSippPassed,
  malformedSipMessages,
  oversizedTcpInvite,
  removeSippRuns,
  requireSipp,
  runSipp,
  sendTcp,
  sendUdp,
  sippScenario,
  startRtpSink,
  startSippServer,
  type ReceivedRtp,
  type SippOptions,
  type SippResult,
} from '../helpers/sipp.js';
import { PT_PCMU, PT_TELEPHONE_EVENT, dtmfEvents, readRtpPcap, writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';

let captures: SippCaptures;
let capturesDir: string;

beforeAll(async () => {
  // The project installs SIPp (sip-tester) everywhere the tests run: a missing one fails here.
  await requireSipp();
  capturesDir = await mkdtemp(join(tmpdir(), 'sipp-captures-'));
  captures = await writeSippCaptures(capturesDir);
});

afterAll(async () => {
  await removeSippRuns();
  if (capturesDir) await rm(capturesDir, { recursive: true, force: true });
});

/** Runs `caller` against a SIPp server playing `peer` (one call unless said), and returns both results. */
async function call(
  peer: string | { builtin: string },
  caller: Omit<SippOptions, 'target'>,
  peerOptions: Partial<Omit<SippOptions, 'target' | 'scenario'>> = {},
): Promise<{ caller: SippResult; callee: SippResult }> {
  const server = await startSippServer({
    scenario: typeof peer === 'string' ? sippScenario(peer) : peer,
    transport: caller.transport,
    calls: 1,
    timeoutMs: caller.timeoutMs + 5000,
    ...peerOptions,
  });
  try {
    const callerResult = await runSipp({ ...caller, target: server.address });
    // The called side ends with its call; one that lingers (the built-in uas waits 4 s) is stopped.
    const callee = await Promise.race([server.result, new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000))]);
    return { caller: callerResult, callee: callee ?? (await server.stop()) };
  } catch (error) {
    await server.stop(500);
    throw error;
  }
}

/** The port of the m=audio line of the first SDP SIPp sent. */
async function offeredMediaPort(result: SippResult): Promise<number> {
  const match = /m=audio (\d+) /.exec(await readFile(result.messagesLog, 'latin1'));
  if (!match) throw new Error(`no m=audio line in ${result.messagesLog}`);
  return Number(match[1]);
}

describe('SIPp itself', () => {
  it('is SIPp 3.6 or later with pcap play and RTP streams compiled in', async () => {
    const sipp = await requireSipp();
    const [major, minor] = sipp.version.split('.').map(Number);
    expect(major! * 100 + minor!).toBeGreaterThanOrEqual(306);
    expect(sipp.pcapPlay, `features: ${sipp.features.join(', ')}`).toBe(true);
    expect(sipp.rtpStream, `features: ${sipp.features.join(', ')}`).toBe(true);
  });
});

describe('RTP captures', () => {
  it('speech: eSpeak NG speaking about 3 s as PCMU in 20 ms packets, one SSRC, sequence and timestamp without gaps', async () => {
    const packets = readRtpPcap(await readFile(captures.speechPcap));
    expect(packets.length).toBe(captures.speechPackets);
    expect(captures.speechMs).toBeGreaterThan(2500);
    expect(captures.speechMs).toBeLessThan(3800); // basic-call.xml pauses 4 s for it
    packets.forEach((packet, n) => {
      expect(packet.payloadType).toBe(PT_PCMU);
      expect(packet.payload.length).toBe(160);
      expect(packet.marker).toBe(n === 0);
      expect(packet.sequence).toBe((packets[0]!.sequence + n) & 0xffff);
      expect(packet.timestamp).toBe(packets[0]!.timestamp + 160 * n);
      expect(packet.ssrc).toBe(packets[0]!.ssrc);
      expect(packet.atMs).toBeCloseTo(20 * n, 6);
      expect(packet.dstPort).toBe(packets[0]!.dstPort);
    });
    // Speech, not silence: µ-law codes near 0x00/0x80 are loud, 0x7f/0xff silent.
    const loud = packets.flatMap((p) => [...p.payload]).filter((code) => (code & 0x7f) < 0x50).length;
    expect(loud).toBeGreaterThan(1000);
  });

  it('DTMF: keys 1, 2 and # as RFC 4733 events with three final packets each, between PCMU silence', async () => {
    const packets = readRtpPcap(await readFile(captures.dtmfPcap));
    expect(packets.length).toBe(captures.dtmfPackets);
    expect(captures.dtmfMs).toBeLessThan(1800); // dtmf-rfc4733.xml pauses 1.8 s for it
    expect(new Set(packets.map((p) => p.ssrc)).size).toBe(1);
    packets.forEach((packet, n) => expect(packet.sequence).toBe(packets[0]!.sequence + n));
    expect(packets[0]!.payloadType).toBe(PT_PCMU);
    expect(packets[packets.length - 1]!.payloadType).toBe(PT_PCMU);
    const events = dtmfEvents(packets);
    expect(events.map((e) => e.digit).join('')).toBe('12#');
    for (const event of events) {
      expect(event).toMatchObject({ durationSamples: 1280, packets: 10, endPackets: 3, marker: true });
    }
    expect(events[1]!.timestamp - events[0]!.timestamp).toBe((160 + 200) * 8);
  });
});

describe.concurrent('SIPp scenarios against SIPp as the called side', () => {
  it('options.xml: 200 from the peer, over UDP and TCP, three calls in a row', async ({ expect }) => {
    for (const transport of ['u1', 't1'] as const) {
      const { caller, callee } = await call(
        'options.uas.xml',
        { scenario: sippScenario('options.xml'), transport, service: '0441234567', calls: 3, rate: 20, timeoutMs: 5000 },
        { calls: 3 },
      );
      assertSippPassed(caller, 3);
      assertSippPassed(callee, 3);
      expect(caller.created).toBe(3);
      expect(caller.stats['OutgoingCall(C)']).toBe('3');
      const log = await readFile(caller.messagesLog, 'latin1');
      expect(log).toContain('OPTIONS sip:0441234567@127.0.0.1:');
      expect(log).toContain(`SIP/2.0/${transport === 'u1' ? 'UDP' : 'TCP'} 127.0.0.1:${caller.localPort};branch=`);
    }
  });

  it('basic-call.xml: the speech capture arrives as RTP from the offered media port, paced in real time', async ({ expect }) => {
    const sink = await startRtpSink();
    try {
      const { caller, callee } = await call(
        'basic-call.uas.xml',
        { scenario: sippScenario('basic-call.xml'), variables: { speech_pcap: captures.speechPcap }, timeoutMs: 10_000 },
        { variables: { rtp_sink_port: String(sink.port) } },
      );
      assertSippPassed(caller);
      assertSippPassed(callee);
      const received = await sink.waitFor(captures.speechPackets, 1000);
      const sent = readRtpPcap(await readFile(captures.speechPcap));
      expect(received.length).toBe(sent.length);
      received.forEach((packet, n) => {
        expect(packet.payloadType).toBe(PT_PCMU);
        expect(packet.sequence).toBe(sent[n]!.sequence);
        expect(packet.timestamp).toBe(sent[n]!.timestamp);
        expect(packet.payload.equals(Buffer.from(sent[n]!.payload))).toBe(true);
      });
      // Symmetric RTP: it comes from the port the INVITE's SDP offered.
      expect(received[0]!.from).toEqual({ address: '127.0.0.1', port: await offeredMediaPort(caller) });
      const span = received[received.length - 1]!.at - received[0]!.at;
      expect(span).toBeGreaterThan(captures.speechMs - 400);
      expect(span).toBeLessThan(captures.speechMs + 400);
    } finally {
      await sink.close();
    }
  });

  it("basic-call.xml against SIPp's built-in uas", async () => {
    const { caller } = await call(
      { builtin: 'uas' },
      { scenario: sippScenario('basic-call.xml'), variables: { speech_pcap: captures.speechPcap }, timeoutMs: 10_000 },
    );
    assertSippPassed(caller);
  });

  it('dtmf-rfc4733.xml: keys 1, 2 and # arrive as telephone-events (PT 101), each ended three times', async ({ expect }) => {
    const sink = await startRtpSink();
    try {
      const { caller, callee } = await call(
        'basic-call.uas.xml',
        { scenario: sippScenario('dtmf-rfc4733.xml'), variables: { dtmf_pcap: captures.dtmfPcap }, timeoutMs: 8000 },
        { variables: { rtp_sink_port: String(sink.port) } },
      );
      assertSippPassed(caller);
      assertSippPassed(callee);
      const received: ReceivedRtp[] = await sink.waitFor(captures.dtmfPackets, 1000);
      expect(received.length).toBe(captures.dtmfPackets);
      expect(received.filter((p) => p.payloadType === PT_TELEPHONE_EVENT).length).toBe(30);
      const events = dtmfEvents(received);
      expect(events.map((e) => `${e.digit}:${e.endPackets}`)).toEqual(['1:3', '2:3', '#:3']);
    } finally {
      await sink.close();
    }
  });

  it('cancel.xml: CANCEL while ringing, 200 for it, 487 for the INVITE, ACK on the INVITE branch (UDP and TCP)', async ({ expect }) => {
    for (const transport of ['u1', 't1'] as const) {
      const { caller, callee } = await call('cancel.uas.xml', { scenario: sippScenario('cancel.xml'), transport, timeoutMs: 5000 });
      assertSippPassed(caller);
      assertSippPassed(callee);
      const log = await readFile(caller.messagesLog, 'latin1');
      const branches = [...log.matchAll(/^(INVITE|CANCEL|ACK) .*\r?\nVia: [^\r\n]*branch=([^\s;]+)/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(branches.map((b) => b.split(' ')[0])).toEqual(['INVITE', 'CANCEL', 'ACK']);
      expect(new Set(branches.map((b) => b.split(' ')[1])).size).toBe(1);
    }
  });

  it('bye-from-gateway.xml: the called side hangs up, the BYE is checked against the dialog and answered 200', async () => {
    const { caller, callee } = await call('bye-from-gateway.uas.xml', { scenario: sippScenario('bye-from-gateway.xml'), timeoutMs: 5000 });
    assertSippPassed(caller);
    assertSippPassed(callee);
  });

  it('reinvite-hold.xml: hold (sendonly → recvonly) and resume (sendrecv) by re-INVITE, over UDP and TCP', async ({ expect }) => {
    for (const transport of ['u1', 't1'] as const) {
      const { caller, callee } = await call('reinvite-hold.uas.xml', { scenario: sippScenario('reinvite-hold.xml'), transport, timeoutMs: 6000 });
      assertSippPassed(caller);
      assertSippPassed(callee);
      const log = await readFile(caller.messagesLog, 'latin1');
      expect([...log.matchAll(/^CSeq: (\d+ \w+)/gm)].map((m) => m[1])).toEqual([
        '1 INVITE',
        '1 INVITE',
        '1 ACK',
        '2 INVITE',
        '2 INVITE',
        '2 ACK',
        '3 INVITE',
        '3 INVITE',
        '3 ACK',
        '4 BYE',
        '4 BYE',
      ]);
    }
  });

  it('info-dtmf.xml: INFO with application/dtmf-relay Signal=5 in the dialog, answered 200', async () => {
    const { caller, callee } = await call('info-dtmf.uas.xml', { scenario: sippScenario('info-dtmf.xml'), timeoutMs: 5000 });
    assertSippPassed(caller);
    assertSippPassed(callee);
  });

  it('malformed.xml: the burst is sent, answers to it are discarded, the final OPTIONS passes', async ({ expect }) => {
    const server = await startSippServer({ scenario: sippScenario('options.uas.xml'), timeoutMs: 10_000 });
    try {
      const caller = await runSipp({ scenario: sippScenario('malformed.xml'), target: server.address, timeoutMs: 5000 });
      assertSippPassed(caller);
      const log = await readFile(caller.messagesLog, 'latin1');
      expect(log).toContain('HELLO WORLD this is not SIP');
      expect(log).toContain('FROBNICATE sip:');
      // SIPp answered some of the burst (it answers any OPTIONS); the caller dropped those answers.
      expect(caller.errors).toContain("can't be mapped to a known SIPp call");
    } finally {
      await server.stop();
    }
  });

  it('raw malformed and oversized datagrams, then options.xml still passes', async ({ expect }) => {
    const server = await startSippServer({ scenario: sippScenario('options.uas.xml'), timeoutMs: 10_000 });
    try {
      const messages = malformedSipMessages(server.address);
      expect(Math.max(...messages.map((m) => m.data.length))).toBe(MAX_UDP_PAYLOAD);
      expect(messages.find((m) => m.name === 'empty datagram')!.data.length).toBe(0);
      // SIPp as the receiver stops answering after the 1,000 Via headers (it copies them all
      // into its answer): that one is for the gateway only.
      const forSipp = messages.filter((m) => m.name !== '1000 Via headers');
      expect(forSipp.length).toBe(messages.length - 1);
      await sendUdp(
        server.address,
        forSipp.map((m) => m.data),
      );
      assertSippPassed(await runSipp({ scenario: sippScenario('options.xml'), target: server.address, timeoutMs: 5000 }));
    } finally {
      await server.stop();
    }
  });

  it('sendTcp delivers a 100 KB INVITE byte for byte', async ({ expect }) => {
    // SIPp cannot take this as the receiver: a message over 64 KB ends it with a fatal error.
    const chunks: Buffer[] = [];
    const server = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => socket.end('SIP/2.0 413 Request Entity Too Large\r\n\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const target = `127.0.0.1:${(server.address() as { port: number }).port}`;
      const invite = oversizedTcpInvite(target);
      expect(invite.length).toBeGreaterThan(100_000);
      const headerEnd = invite.indexOf('\r\n\r\n') + 4;
      expect(Number(/Content-Length: (\d+)/.exec(invite.toString('latin1'))![1])).toBe(invite.length - headerEnd);
      const { error } = await sendTcp(target, invite, { waitMs: 200 });
      expect(error).toBeNull();
      expect(Buffer.concat(chunks).equals(invite)).toBe(true);
    } finally {
      server.close();
    }
  });

  it('a failing run explains itself: exit 1, the failure counter, the command and the messages sent', async ({ expect }) => {
    // A socket that takes the OPTIONS and never answers.
    const silent = await startRtpSink();
    const result = await runSipp({
      scenario: sippScenario('options.xml'),
      target: `127.0.0.1:${silent.port}`,
      timeoutMs: 8000,
      extraArgs: ['-max_non_invite_retrans', '1'],
    }).finally(() => silent.close());
    expect(result.exitCode).toBe(1);
    expect(result.failed).toBe(1);
    expect(() => assertSippPassed(result)).toThrow(/SIPp run failed/);
    expect(result.report).toContain(`-sf ${sippScenario('options.xml')}`);
    expect(result.report).toContain('at least one call failed');
    expect(result.report).toContain('FailedMaxUDPRetrans 1');
    expect(result.report).toMatch(/OPTIONS sip:service@127\.0\.0\.1:\d+ SIP\/2\.0/);
  });

  it('a run past its timeout ends with SIPp exit 255 and says so', async ({ expect }) => {
    // The built-in uas answers and then waits for a BYE; bye-from-gateway.xml waits for one too.
    const { caller } = await call({ builtin: 'uas' }, { scenario: sippScenario('bye-from-gateway.xml'), timeoutMs: 1500 });
    expect(caller.exitCode).toBe(255);
    expect(caller.report).toMatch(/timed out after/);
    expect(caller.report).toContain('BYE <----------');
  });
});
