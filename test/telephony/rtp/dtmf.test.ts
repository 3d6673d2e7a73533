/**
 * RFC 4733 telephone events: the packets a key press becomes, those packets through the pacer,
 * and the receiver that makes one key of each press whatever the network did to its packets.
 */
import { describe, expect, it } from 'vitest';
import { DTMF_KEYS, DtmfReceiver, dtmfEventCode, dtmfEventFrames, parseDtmfEvent, serializeDtmfEvent } from '../../../src/telephony/rtp/dtmf.js';
import { PacedStream } from '../../../src/telephony/rtp/paced-stream.js';
import { PacerClock } from '../../../src/telephony/rtp/pacer.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';
import { FakeScheduler } from './fake-scheduler.js';

/** An event packet as the network delivers it. */
function eventPacket(
  key: string,
  timestamp: number,
  duration: number,
  options: { end?: boolean; marker?: boolean; ssrc?: number; seq?: number } = {},
): RtpPacket {
  const payload = serializeDtmfEvent({ event: dtmfEventCode(key), end: options.end ?? false, volume: 10, duration });
  return { payloadType: 101, sequenceNumber: options.seq ?? 0, timestamp: timestamp >>> 0, ssrc: options.ssrc ?? 1, marker: options.marker ?? false, payload };
}

/** The packets of one 100 ms press as a sender emits them. */
function press(key: string, timestamp: number, ssrc = 1): RtpPacket[] {
  return [
    eventPacket(key, timestamp, 160, { marker: true, ssrc }),
    ...[320, 480, 640].map((d) => eventPacket(key, timestamp, d, { ssrc })),
    ...[0, 1, 2].map(() => eventPacket(key, timestamp, 800, { end: true, ssrc })),
  ];
}

const receive = (receiver: DtmfReceiver, packets: RtpPacket[]): string => packets.map((p) => receiver.push(p) ?? '').join('');

describe('DTMF event codes', () => {
  it('maps the sixteen keys to 0–15 and back', () => {
    expect([...DTMF_KEYS].map(dtmfEventCode)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(['*', '#', 'A', 'd'].map(dtmfEventCode)).toEqual([10, 11, 12, 15]);
  });

  it('refuses anything that is not a key', () => {
    for (const key of ['', 'E', '55', ' ', 'x']) expect(() => dtmfEventCode(key)).toThrow(RangeError);
  });

  it('writes and reads the RFC 4733 payload bit for bit', () => {
    const bytes = serializeDtmfEvent({ event: 11, end: true, volume: 10, duration: 0x1234 });
    expect([...bytes]).toEqual([11, 0x80 | 10, 0x12, 0x34]);
    expect(parseDtmfEvent(bytes)).toEqual({ event: 11, end: true, volume: 10, duration: 0x1234 });
    expect(parseDtmfEvent(Uint8Array.of(5, 0x3f, 0, 0))).toEqual({ event: 5, end: false, volume: 63, duration: 0 });
    expect(parseDtmfEvent(new Uint8Array(3))).toBeNull();
    expect(parseDtmfEvent(serializeDtmfEvent({ event: 1, end: false, volume: 0, duration: 99999 }))!.duration).toBe(0xffff);
  });
});

describe('dtmfEventFrames', () => {
  it('sends progress packets with growing durations, then the end packet three times', () => {
    const frames = dtmfEventFrames('5', { payloadType: 101 });
    expect(frames.map((f) => parseDtmfEvent(f.payload))).toEqual([
      { event: 5, end: false, volume: 10, duration: 160 },
      { event: 5, end: false, volume: 10, duration: 320 },
      { event: 5, end: false, volume: 10, duration: 480 },
      { event: 5, end: false, volume: 10, duration: 640 },
      { event: 5, end: true, volume: 10, duration: 800 },
      { event: 5, end: true, volume: 10, duration: 800 },
      { event: 5, end: true, volume: 10, duration: 800 },
    ]);
    expect(frames.map((f) => [f.payloadType, f.marker, f.repeatsTimestamp])).toEqual([[101, true, false], ...Array(6).fill([101, false, true])]);
  });

  it('follows duration, volume and wideband clocks, and clamps what RFC 4733 cannot carry in one event', () => {
    const wide = dtmfEventFrames('#', { payloadType: 96, durationMs: 60, volume: 20, samplesPerFrame: 320 });
    expect(wide.map((f) => parseDtmfEvent(f.payload)!.duration)).toEqual([320, 640, 960, 960, 960]);
    expect(parseDtmfEvent(wide[0]!.payload)).toMatchObject({ event: 11, volume: 20 });
    const blip = dtmfEventFrames('1', { payloadType: 101, durationMs: 5 });
    expect(blip.length).toBe(3);
    expect(blip[0]).toMatchObject({ marker: true, repeatsTimestamp: false });
    expect(parseDtmfEvent(blip[0]!.payload)).toMatchObject({ end: true, duration: 160 });
    const long = dtmfEventFrames('1', { payloadType: 101, durationMs: 60_000 });
    expect(parseDtmfEvent(long.at(-1)!.payload)!.duration).toBe(64000);
    expect(() => dtmfEventFrames('Z', { payloadType: 101 })).toThrow(RangeError);
  });

  it('goes out through the pacer with one timestamp per event, between audio frames whose clock runs on', () => {
    const scheduler = new FakeScheduler();
    const clock = new PacerClock({ scheduler });
    const sent: Array<[number, number, boolean, number | undefined]> = [];
    const stream = new PacedStream({
      samplesPerFrame: 160,
      initialTimestamp: 0,
      onSend: (payload, timestamp, marker, payloadType) => sent.push([payload.length, timestamp, marker, payloadType]),
    });
    stream.enqueue(new Uint8Array(160));
    for (const frame of dtmfEventFrames('9', { payloadType: 101 })) stream.enqueue(frame);
    stream.enqueue(new Uint8Array(160));
    clock.add(stream);
    scheduler.advanceTo(200);
    clock.close();
    expect(sent).toEqual([[160, 0, true, undefined], [4, 160, true, 101], ...Array(6).fill([4, 160, false, 101]), [160, 8 * 160, false, undefined]]);
  });
});

describe('DtmfReceiver', () => {
  it('makes one key of a press, whatever its repeats and end packets', () => {
    const receiver = new DtmfReceiver();
    expect(receive(receiver, press('7', 16000))).toBe('7');
  });

  it('reports each of the sixteen keys', () => {
    const receiver = new DtmfReceiver();
    expect(
      receive(
        receiver,
        [...DTMF_KEYS].flatMap((key, i) => press(key, 10000 + i * 2000)),
      ),
    ).toBe(DTMF_KEYS);
  });

  it('reports a press whose first packets were lost, from whichever packet arrives', () => {
    const receiver = new DtmfReceiver();
    expect(receive(receiver, press('3', 1000).slice(2))).toBe('3');
    expect(receive(receiver, press('4', 5000).slice(4))).toBe('4');
    expect(receive(receiver, press('5', 9000).slice(6))).toBe('5');
  });

  it('reports the same key twice for two presses', () => {
    const receiver = new DtmfReceiver();
    expect(receive(receiver, [...press('1', 1000), ...press('1', 3000)])).toBe('11');
    // Even when every end packet of the first press was lost.
    expect(receive(receiver, [...press('2', 6000).slice(0, 4), ...press('2', 8000)])).toBe('22');
  });

  it('ignores stragglers of an earlier press that arrive after a later one began', () => {
    const receiver = new DtmfReceiver();
    const first = press('8', 1000);
    const second = press('9', 3000);
    expect(receive(receiver, [...first.slice(0, 5), second[0]!, first[5]!, first[6]!, ...second.slice(1)])).toBe('89');
  });

  it('handles duplicated and reordered packets of one press', () => {
    const receiver = new DtmfReceiver();
    const packets = press('0', 1000);
    expect(receive(receiver, [packets[2]!, packets[0]!, packets[1]!, packets[1]!, packets[6]!, packets[3]!])).toBe('0');
  });

  it('takes a press across the timestamp wrap as a new one', () => {
    const receiver = new DtmfReceiver();
    expect(receive(receiver, [...press('1', 2 ** 32 - 1000), ...press('2', 1000)])).toBe('12');
  });

  it('does not split a held key that continues in a new segment (RFC 4733 2.5.1.3)', () => {
    const receiver = new DtmfReceiver();
    const segment1 = [eventPacket('5', 1000, 160, { marker: true }), eventPacket('5', 1000, 0xffff)];
    const segment2 = [eventPacket('5', 1000 + 0xffff, 160), eventPacket('5', 1000 + 0xffff, 800, { end: true })];
    expect(receive(receiver, [...segment1, ...segment2])).toBe('5');
  });

  it('starts afresh for a new SSRC', () => {
    const receiver = new DtmfReceiver();
    expect(receive(receiver, [...press('1', 5000, 1), ...press('1', 5000, 2)])).toBe('11');
    // A timestamp "before" the previous press is fine from a new source.
    expect(receive(receiver, press('6', 100, 3))).toBe('6');
  });

  it('ignores short payloads and events that are not keys (flash, tones)', () => {
    const receiver = new DtmfReceiver();
    const base = eventPacket('1', 1000, 160);
    expect(receiver.push({ ...base, payload: new Uint8Array(2) })).toBeNull();
    expect(receiver.push({ ...base, payload: Uint8Array.of(16, 10, 0, 160) })).toBeNull();
    expect(receiver.push({ ...base, payload: Uint8Array.of(255, 10, 0, 160) })).toBeNull();
    expect(receiver.push(base)).toBe('1');
  });

  it('reads the keys back from sent packets after a trip over the wire', () => {
    const receiver = new DtmfReceiver();
    const keys = '1234567890*#ABCD';
    let seq = 0;
    let got = '';
    [...keys].forEach((key, i) => {
      dtmfEventFrames(key, { payloadType: 101 }).forEach((frame, j) => {
        const timestamp = i * 4000 + (frame.repeatsTimestamp ? 0 : j * 160);
        const wire = serializeRtp({
          payloadType: frame.payloadType!,
          sequenceNumber: seq++,
          timestamp,
          ssrc: 9,
          marker: frame.marker ?? false,
          payload: frame.payload,
        });
        got += receiver.push(parseRtp(wire)!) ?? '';
      });
    });
    expect(got).toBe(keys);
  });
});
