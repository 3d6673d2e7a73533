/**
 * Hotline flows against real SIP peers (SIPp from Debian's sip-tester): a caller chooses a menu
 * option by RFC 4733 events, by SIP INFO and by in-band tones, and receives a REFER with the
 * right Refer-To; it answers 202 and NOTIFY sipfrag 200, and the gateway ends its leg. A caller
 * whose phone refuses REFER is bridged to a second SIPp peer, the person: the gateway places
 * the call (caller ID, Diversion, an X- header) and RTP flows both ways between the two peers'
 * media sockets through the gateway, checked where it arrives; with a waiting text far longer
 * than the ringing, the bridge still starts when the person answers. The SIPp peers' SDP names media
 * sockets of this test, since SIPp itself cannot report what RTP it received.
 */
import dgram from 'node:dgram';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMulaw, encodeMulaw } from '../../src/audio/g711.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { capturedLogger } from '../helpers/captured-logger.js';
import { assertSippPassed, freePort, removeSippRuns, requireSipp, runSipp, sippScenario, startSippServer } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';
import { pcmuPackets, rtpBytes, rtpPcap, writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';

const MENU = (target: string) => `      - answer: {}
      - menu:
          prompt: For a fault press 1. For anything else press 2.
          options:
            - { key: "1", goto: fault }
          timeout_ms: 8000
          retries: 0
      - hangup: { reason: no choice }
      - id: fault
        transfer:
          ${target}
          on_fail: failed
      - id: failed
        say: { text: "Transfer {{transfer}}." }
      - hangup: { reason: transfer failed }
`;

/** About 12 s of sandbox speech (14 characters a second): far longer than the target rings. */
const WAITING_TEXT =
  'Please hold the line, we are putting you through to the next free member of our service team. Thank you for your patience, it will not be long now.';

const dialplan = (targetPort: number) => `name: hotline-sipp
routes:
  - number: "hotline"
    engines: synthetic
    language: en
    voice: jonas
    steps:
${MENU('to: "+41445550111"\n          mode: refer')}
  - number: "hotline-bridge"
    engines: synthetic
    language: en
    voice: jonas
    steps:
${MENU(`to: "sip:stoerung@127.0.0.1:${targetPort}"\n          caller_id: "+41445550100"\n          diversion: true\n          headers: { X-Hotline-Topic: stoerung }\n          ring_timeout_s: 10`)}
  - number: "hotline-short-ring"
    engines: synthetic
    language: en
    voice: jonas
    steps:
${MENU(`to: "sip:stoerung@127.0.0.1:${targetPort}"\n          ring_timeout_s: 5`)}
  - number: "hotline-bridge-waiting"
    engines: synthetic
    language: en
    voice: jonas
    steps:
${MENU(`to: "sip:stoerung@127.0.0.1:${targetPort}"\n          ring_timeout_s: 10\n          waiting: "${WAITING_TEXT}"`)}
`;

let telephony: StartedTelephony;
let captures: SippCaptures;
let inbandPcap: string;
let logs: Array<Record<string, unknown>> = [];
let targetPort: number;

/** The key 1 as DTMF tones in the audio (697 Hz and 1209 Hz, 160 ms), between silences, PCMU. */
function inbandKey(): Uint8Array {
  const rate = 8000;
  const samples = new Int16Array(rate * 0.6);
  for (let n = 0; n < rate * 0.16; n++) {
    const t = n / rate;
    samples[rate * 0.2 + n] = Math.round(6000 * (Math.sin(2 * Math.PI * 697 * t) + Math.sin(2 * Math.PI * 1209 * t)));
  }
  return encodeMulaw(samples);
}

beforeAll(async () => {
  await requireSipp();
  await loadResampler();
  const captured = capturedLogger();
  logs = captured.logs;
  targetPort = await freePort('127.0.0.1', 'u1');
  telephony = await startTelephony(dialplan(targetPort), { SPRACHROHR_RTP_PORTS: '31400-31499' }, { logger: captured.logger });
  captures = await writeSippCaptures(telephony.dir, { digits: '1' });
  inbandPcap = path.join(telephony.dir, 'inband.pcap');
  await fs.writeFile(inbandPcap, rtpPcap(pcmuPackets(inbandKey())));
}, 60_000);

afterAll(async () => {
  await telephony?.close();
  await removeSippRuns();
});

const target = () => `127.0.0.1:${telephony.service.endpoint.ports.udp}`;
const referLines = () => logs.filter((line) => line['msg'] === 'refer');

async function settled(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (telephony.service.activeCalls > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(telephony.service.activeCalls).toBe(0);
}

describe('menu keys lead to a REFER', () => {
  const cases: Array<[string, string, Record<string, string>]> = [
    ['RFC 4733 events', 'menu-refer.xml', { payloads: '0 101', keys_pcap: '' }],
    ['SIP INFO', 'menu-refer-info.xml', { payloads: '0 101' }],
    ['in-band tones (no telephone-event offered)', 'menu-refer.xml', { payloads: '0', keys_pcap: '' }],
  ];
  for (const [how, scenario, variables] of cases) {
    it(`${how}: the option's transfer sends REFER, the NOTIFY sipfrag 200 ends the gateway's leg`, async () => {
      const keys = how.startsWith('in-band') ? inbandPcap : captures.dtmfPcap;
      const before = referLines().length;
      const result = await runSipp({
        scenario: sippScenario(scenario),
        target: target(),
        service: 'hotline',
        timeoutMs: 30_000,
        variables: { ...variables, ...('keys_pcap' in variables ? { keys_pcap: keys } : {}) },
      });
      assertSippPassed(result);
      const refer = referLines().slice(before);
      expect(refer).toHaveLength(1);
      expect(refer[0]).toMatchObject({ result: 'transferred', status: 200, target: `sip:+41445550111@127.0.0.1:${result.localPort}` });
      await settled();
    });
  }
});

/** A media socket of the test: records what arrives, and talks back to where it came from. */
class MediaSocket {
  readonly received: Array<{ payload: Buffer; from: number }> = [];
  private sender: NodeJS.Timeout | null = null;
  private sequence = 0;

  private constructor(readonly socket: dgram.Socket) {
    socket.on('message', (data, from) => {
      if (data.length > 12) this.received.push({ payload: Buffer.from(data.subarray(12)), from: from.port });
    });
  }

  static async open(): Promise<MediaSocket> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new MediaSocket(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Once anything arrived, sends 20 ms PCMU packets back to its source: tag byte, then the packet's number. */
  talk(tag: number): void {
    const ssrc = 0x5eed0000 + tag;
    this.sender = setInterval(() => {
      const last = this.received.at(-1);
      if (!last) return;
      const payload = new Uint8Array(160).fill(0x2a);
      payload[0] = tag;
      payload[1] = this.sequence & 0xff;
      payload[2] = this.sequence >> 8;
      this.socket.send(
        rtpBytes({ atMs: 0, payloadType: 0, marker: this.sequence === 0, sequence: this.sequence, timestamp: this.sequence * 160, ssrc, payload }),
        last.from,
        '127.0.0.1',
      );
      this.sequence += 1;
    }, 20);
  }

  /** Packets whose audio is the Swiss ringback tone: nearly all of its energy at 425 Hz. */
  ringback(): number {
    return this.received.filter((packet) => {
      const samples = decodeMulaw(packet.payload);
      let energy = 0;
      let cos = 0;
      let sin = 0;
      samples.forEach((value, n) => {
        energy += value * value;
        cos += value * Math.cos((2 * Math.PI * 425 * n) / 8000);
        sin += value * Math.sin((2 * Math.PI * 425 * n) / 8000);
      });
      // A pure tone of amplitude A over N samples: energy N·A²/2, and (cos² + sin²) = (N·A/2)².
      return energy > 0 && (2 * (cos * cos + sin * sin)) / (samples.length * energy) > 0.8;
    }).length;
  }

  /** Packets that came from the other side's {@link talk} with `tag`. */
  from(tag: number): number {
    return this.received.filter((packet) => packet.payload[0] === tag && packet.payload[3] === 0x2a && packet.payload[159] === 0x2a).length;
  }

  close(): void {
    if (this.sender) clearInterval(this.sender);
    this.socket.close();
  }
}

/**
 * A caller (menu-bridge.xml: key 1, REFER refused, then 5 s on the line) to `service`, whose
 * bridged transfer reaches a SIPp person playing `targetScenario`; both talk through the test's
 * media sockets, handed to `check` once both SIPp runs passed.
 */
async function bridgedCall(service: string, targetScenario: string, check: (caller: MediaSocket, person: MediaSocket) => void): Promise<void> {
  const caller = await MediaSocket.open();
  const person = await MediaSocket.open();
  caller.talk(0xa1);
  person.talk(0xb2);
  const targetRun = await startSippServer({
    scenario: sippScenario(targetScenario),
    localPort: targetPort,
    calls: 1,
    timeoutMs: 40_000,
    variables: { rtp_port: String(person.port) },
  });
  try {
    const callerResult = await runSipp({
      scenario: sippScenario('menu-bridge.xml'),
      target: target(),
      service,
      timeoutMs: 30_000,
      variables: { payloads: '0 101', rtp_port: String(caller.port) },
    });
    assertSippPassed(callerResult);
    assertSippPassed(await targetRun.result);
    check(caller, person);
    await settled();
  } finally {
    caller.close();
    person.close();
    await targetRun.stop(500).catch(() => undefined);
  }
}

describe('a caller whose phone refuses REFER is bridged', () => {
  it('calls the target with caller ID, Diversion and X- header, and RTP flows both ways through the gateway', async () => {
    await bridgedCall('hotline-bridge', 'bridge-target.uas.xml', (caller, person) => {
      // Each side got the other's packets, byte for byte (both legs PCMU: the payload is forwarded as it came).
      expect(person.from(0xa1)).toBeGreaterThan(50);
      expect(caller.from(0xb2)).toBeGreaterThan(50);
      // While the person's phone rang (1.5 s), the caller heard the ringback: at least its first second.
      expect(caller.ringback()).toBeGreaterThanOrEqual(45);
      const refer = referLines().at(-1);
      expect(refer).toMatchObject({ result: 'refused', status: 405, target: `sip:stoerung@127.0.0.1:${targetPort}` });
      expect(logs.some((line) => line['msg'] === 'bridged')).toBe(true);
    });
  });
});

describe('a bridged transfer with a waiting text', () => {
  it('stops the waiting text when the target answers and bridges at once, not when the text is over', async () => {
    // The caller stays 5 s after the refused REFER; the target answers after 1.5 s of the
    // waiting text's 12 s. Had the bridge waited for the text to end, the caller would have
    // gone before it began.
    await bridgedCall('hotline-bridge-waiting', 'bridge-target-waiting.uas.xml', (caller, person) => {
      // About 3.5 s of the bridge (175 packets) each way; well over half of it is asked for.
      expect(caller.from(0xb2)).toBeGreaterThan(100);
      expect(person.from(0xa1)).toBeGreaterThan(100);
    });
  });
});

describe("a bridged transfer that fails runs the step's on_fail", () => {
  const cases: Array<[string, string, string, string, number | null]> = [
    ['busy (486)', 'outbound-busy.uas.xml', 'hotline-bridge', 'busy', 486],
    ['declined (603)', 'outbound-decline.uas.xml', 'hotline-bridge', 'busy', 603],
    ['not answered within ring_timeout_s (CANCEL, 487)', 'ring-no-answer.uas.xml', 'hotline-short-ring', 'no_answer', null],
  ];
  for (const [how, targetScenario, number, outcome, status] of cases) {
    it(`${how}: {{transfer}} is ${outcome}, the on_fail prompt plays and the call ends with its reason`, { timeout: 60_000 }, async () => {
      const caller = await MediaSocket.open();
      const targetRun = await startSippServer({ scenario: sippScenario(targetScenario), localPort: targetPort, calls: 1, timeoutMs: 40_000 });
      try {
        const before = logs.length;
        const callerResult = await runSipp({
          scenario: sippScenario('menu-bridge-fails.xml'),
          target: target(),
          service: number,
          timeoutMs: 40_000,
          variables: { payloads: '0 101', rtp_port: String(caller.port) },
        });
        assertSippPassed(callerResult);
        assertSippPassed(await targetRun.result);
        const transfer = logs.slice(before).find((line) => line['msg'] === 'transfer');
        expect(transfer).toMatchObject({ result: outcome, status });
        expect(logs.slice(before).some((line) => line['msg'] === 'hanging up' && line['reason'] === 'transfer failed')).toBe(true);
        await settled();
      } finally {
        caller.close();
        await targetRun.stop(500).catch(() => undefined);
      }
    });
  }
});
