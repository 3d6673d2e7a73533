/**
 * Answering-machine detection on calls the gateway places, end to end: SIPp answers as the
 * callee (amd-callee.uas.xml) and a UDP socket of the test is its voice, sending eSpeak speech,
 * beeps and line noise as PCMU RTP in real time to the gateway's RTP port (read from the offer
 * SIPp logged). A person saying "Hallo?", an answering machine whose greeting ends in a beep,
 * and a line that stays silent: the verdict lands in the call's record, the route branches on
 * `{{amd}}`, `{{amd_reason}}`, `{{amd_ms}}` and `{{amd_beep}}` (the Reason of the gateway's BYE
 * names the branch), and the message for the machine reaches the callee after its beep.
 */
import dgram from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMulaw } from '../../../src/audio/g711.js';
import type { CallOrder } from '../../../src/telephony/outbound/call-order.js';
import type { MachineDetectionMode } from '../../../src/telephony/outbound/machine-detection.js';
import type { PlacedCallRecord } from '../../../src/telephony/outbound/placed-call-record.js';
import { parseRtp, serializeRtp } from '../../../src/telephony/rtp/rtp-packet.js';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { eventually } from '../../helpers/eventually.js';
import { loudSpan, SpeechAudio } from '../../helpers/speech-audio.js';
import { assertSippPassed, removeSippRuns, sippScenario, startSippServer } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';
import { pieceStarts, recording, type Piece } from '../amd/amd-recordings.js';

const RATE = 8000;
const FRAME = 160;
const owner = { keyId: 'key_1', accountId: 'acct_a' };

/** Each outcome of the detection takes its own branch, which ends the call with its own reason. */
const amdRoute = [
  'name: amd',
  'routes:',
  '  - number: amd',
  '    engines: synthetic',
  '    language: de-CH',
  '    voice: anna',
  '    steps:',
  '      - branch:',
  '          - if: { amd: human, amd_reason: short-greeting, amd_ms: { matches: "^[1-9][0-9]*$" }, amd_beep: { empty: true } }',
  '            goto: person',
  '          - if: { amd: machine, amd_beep: "true" }',
  '            goto: message',
  '          - if: { amd: unknown, amd_reason: silence }',
  '            goto: nobody',
  '      - hangup: { reason: unexpected outcome }',
  '      - id: person',
  '        say: { text: "Guten Tag, Frau Meier." }',
  '      - hangup: { reason: spoke with a person }',
  '      - id: message',
  '        say: { text: "Bitte rufen Sie uns zurück." }',
  '      - hangup: { reason: left a message }',
  '      - id: nobody',
  '        hangup: { reason: nobody there }',
].join('\n');

/** An RTP packet the callee received from the gateway. */
interface Heard {
  readonly at: number;
  readonly payloadType: number;
  readonly bytes: number;
}

/**
 * The callee's voice: sends `pcm` as PCMU RTP (20 ms a packet, one stream) to the gateway's
 * media port, paced on the clock without drift (late ticks catch up), then µ-law silence until
 * stopped; keeps when each packet went out and what the gateway sent back.
 */
class CalleeVoice {
  readonly heard: Heard[] = [];
  /** performance.now() when each packet went out. */
  readonly sentAt: number[] = [];
  private readonly ssrc = 0x43414c45;
  private readonly silence = encodeMulaw(new Int16Array(FRAME));
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (data) => {
      const packet = parseRtp(data);
      if (packet) this.heard.push({ at: performance.now(), payloadType: packet.payloadType, bytes: packet.payload.length });
    });
  }

  static async bind(): Promise<CalleeVoice> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    return new CalleeVoice(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Starts sending `pcm` to `address`:`port` now. */
  play(pcm: Int16Array, address: string, port: number): void {
    const payloads = encodeMulaw(pcm);
    const start = performance.now();
    const tick = (): void => {
      if (this.stopped) return;
      const due = Math.floor((performance.now() - start) / 20) + 1;
      for (let n = this.sentAt.length; n < due; n++) {
        const from = n * FRAME;
        const payload = from + FRAME <= payloads.length ? payloads.subarray(from, from + FRAME) : this.silence;
        this.socket.send(
          serializeRtp({ payloadType: 0, sequenceNumber: (1000 + n) & 0xffff, timestamp: (n * FRAME) >>> 0, ssrc: this.ssrc, marker: n === 0, payload }),
          port,
          address,
        );
        this.sentAt.push(performance.now());
      }
      this.timer = setTimeout(tick, Math.max(0, start + this.sentAt.length * 20 - performance.now()));
    };
    tick();
  }

  /** When the packet holding sample `sample` of the played audio went out. */
  sentAtSample(sample: number): number {
    const at = this.sentAt[Math.floor(sample / FRAME)];
    if (at === undefined) throw new Error(`sample ${sample} was not sent (${this.sentAt.length} packets)`);
    return at;
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}

/** What one call showed. */
interface Answered {
  readonly record: PlacedCallRecord;
  /** performance.now() when the call was seen answered (the detection starts at the answer). */
  readonly answeredAt: number;
  readonly voice: CalleeVoice;
  /** The Reason text of the gateway's BYE. */
  readonly byeReason: string;
}

let telephony: StartedTelephony;
let speech: SpeechAudio;
let hallo: Int16Array;
let greeting: Int16Array;
const { logger, logs } = capturedLogger();

beforeAll(async () => {
  speech = await SpeechAudio.start();
  hallo = await speech.speak('Hallo?', RATE, 'de', 'anna');
  greeting = await speech.speak('Guten Tag, hier ist die Combox von Hans Müller. Bitte sprechen Sie nach dem Signalton.', RATE, 'de', 'jonas');
  telephony = await startTelephony(
    anyNumberDialplan('      - hangup: {}'),
    { SPRACHROHR_RTP_PORTS: '43300-43339' },
    { logger, files: { 'amd.yaml': amdRoute } },
  );
}, 30_000);
afterAll(async () => {
  await telephony?.close();
  await speech?.close();
  await removeSippRuns();
});

/** Polls SIPp's `<log>` file until a line starts with `prefix`; the rest of the line. */
async function sippLogLine(file: string, prefix: string, ms: number): Promise<string> {
  const until = performance.now() + ms;
  for (;;) {
    const text = await readFile(file, 'latin1').catch(() => '');
    const line = text.split('\n').find((entry) => entry.startsWith(prefix));
    if (line !== undefined) return line.slice(prefix.length).trim();
    if (performance.now() > until) throw new Error(`SIPp logged no "${prefix}" within ${ms} ms:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Places a call to SIPp with `mode`; once it is answered, the callee's voice plays `audio`
 * (then silence) until the gateway hangs up.
 */
async function answerWith(mode: MachineDetectionMode, audio: Int16Array): Promise<Answered> {
  const voice = await CalleeVoice.bind();
  try {
    const callee = await startSippServer({
      scenario: sippScenario('amd-callee.uas.xml'),
      calls: 1,
      timeoutMs: 25_000,
      variables: { rtp_port: String(voice.port) },
    });
    try {
      const order: CallOrder = { to: `sip:callee@${callee.address}`, dialplan: 'amd', machine_detection: mode };
      const record = await telephony.service.dialer.place(order, owner);
      const [address, port] = (await sippLogLine(callee.files.logs, 'offer ', 5000)).split(' ');
      // The detection starts in the same turn as the answer: see it at once and start talking.
      const until = performance.now() + 5000;
      while (record.state !== 'answered' && record.state !== 'failed' && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 1));
      const answeredAt = performance.now();
      expect(record.state).toBe('answered');
      voice.play(audio, address!, Number(port));
      assertSippPassed(await callee.result);
      await eventually(() => record.state === 'completed', 5000, `call ${record.id} to be over (${record.state})`);
      const byeReason = await sippLogLine(callee.files.logs, 'bye-reason ', 0);
      return { record, answeredAt, voice, byeReason };
    } catch (error) {
      await callee.stop(500);
      throw error;
    }
  } finally {
    await voice.close();
  }
}

/** Milliseconds from the answer to when the callee heard the gateway's first RTP. */
const firstHeardMs = (call: Answered): number => call.voice.heard[0]!.at - call.answeredAt;

describe('answering-machine detection on a placed call', () => {
  it('hears a person in "Hallo?" and silence: human within 2.5 s, and the route speaks to them after the verdict', async () => {
    const pieces: Piece[] = [{ silenceS: 0.4 }, hallo, { silenceS: 6 }];
    // eSpeak's audio ends in silence of its own: the word ends where it stops being loud.
    const halloEnd = (pieceStarts(RATE, pieces)[1]! + loudSpan(hallo, RATE).end) * RATE;
    const call = await answerWith('detect', recording(RATE, pieces));
    const amd = call.record.amd!;
    expect(amd).toMatchObject({ result: 'human', reason: 'short-greeting', message_end_ms: null, beep: null });
    // After the 800 ms of silence that follow the greeting, and well before a machine's greeting would be over.
    const halloEndMs = call.voice.sentAtSample(halloEnd) - call.answeredAt;
    expect(amd.after_ms).toBeGreaterThanOrEqual(halloEndMs + 700);
    expect(amd.after_ms).toBeLessThan(2500);
    // The person branch ran: it spoke (PCMU, 20 ms a packet), after the verdict, then hung up.
    expect(call.byeReason).toBe('spoke with a person');
    expect(call.record).toMatchObject({ state: 'completed', endedBy: 'gateway', runs: { dialplan: 'amd.yaml', route: 'amd' } });
    expect(call.voice.heard.length).toBeGreaterThan(50);
    expect(call.voice.heard.every((packet) => packet.payloadType === 0 && packet.bytes === FRAME)).toBe(true);
    expect(firstHeardMs(call)).toBeGreaterThanOrEqual(amd.after_ms);
    const logged = logs.filter((line) => line['msg'] === 'machine detection' && line['call'] === call.record.id);
    expect(logged).toEqual([expect.objectContaining({ amd })]);
  }, 20_000);

  it('hears a machine in a long greeting, waits for its beep, and leaves the message after it', async () => {
    const pieces: Piece[] = [{ silenceS: 0.3 }, greeting, { silenceS: 0.5 }, { beepHz: 1000, beepMs: 300 }, { silenceS: 4 }];
    const starts = pieceStarts(RATE, pieces);
    const call = await answerWith('detect_message_end', recording(RATE, pieces));
    const amd = call.record.amd!;
    expect(amd).toMatchObject({ result: 'machine', beep: true });
    expect(['long-greeting', 'many-words']).toContain(amd.reason);
    // The verdict came while the greeting played; the message end at the beep's end (sent in the
    // packet before the first one after it), within 200 ms.
    const greetingEndMs = call.voice.sentAtSample(starts[2]! * RATE) - call.answeredAt;
    const beepEndMs = call.voice.sentAtSample(starts[4]! * RATE) - call.answeredAt;
    expect(amd.after_ms).toBeLessThan(greetingEndMs);
    expect(amd.message_end_ms).toBeGreaterThanOrEqual(beepEndMs - 20);
    expect(amd.message_end_ms).toBeLessThan(beepEndMs + 200);
    // The message reached the callee after the beep had been played, not before.
    expect(call.byeReason).toBe('left a message');
    expect(call.record).toMatchObject({ state: 'completed', endedBy: 'gateway' });
    expect(call.voice.heard.length).toBeGreaterThan(50);
    expect(firstHeardMs(call)).toBeGreaterThan(beepEndMs);
    expect(firstHeardMs(call)).toBeLessThan(beepEndMs + 500);
  }, 25_000);

  it('says unknown (silence) for a line that stays quiet, after the initial 2.5 s', async () => {
    const call = await answerWith('detect', recording(RATE, [{ silenceS: 6 }]));
    const amd = call.record.amd!;
    expect(amd).toMatchObject({ result: 'unknown', reason: 'silence', message_end_ms: null, beep: null });
    expect(amd.after_ms).toBeGreaterThanOrEqual(2500);
    expect(amd.after_ms).toBeLessThan(3000);
    // The route's unknown branch hung up without a word.
    expect(call.byeReason).toBe('nobody there');
    expect(call.record).toMatchObject({ state: 'completed', endedBy: 'gateway' });
    expect(call.voice.heard).toHaveLength(0);
  }, 20_000);
});
