/**
 * RTP packets against rtp.js as the reference: what it builds we read field for field, what we
 * write it reads back, and garbage of every kind comes back as null instead of an exception.
 */
import { RtpPacket as ReferencePacket, ReceiverReportPacket, SenderReportPacket } from 'rtp.js/packets';
import { describe, expect, it } from 'vitest';
import { isRtcp, parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';

function bytesOf(packet: { getView(): DataView }): Uint8Array {
  const view = packet.getView();
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
}

function reference(fields: Omit<RtpPacket, 'payload'>, payload: Uint8Array): ReferencePacket {
  const packet = new ReferencePacket();
  packet.setPayloadType(fields.payloadType);
  packet.setSequenceNumber(fields.sequenceNumber);
  packet.setTimestamp(fields.timestamp);
  packet.setSsrc(fields.ssrc);
  packet.setMarker(fields.marker);
  packet.setPayload(new DataView(payload.buffer, payload.byteOffset, payload.byteLength));
  return packet;
}

const FIELDS = { payloadType: 0, sequenceNumber: 65535, timestamp: 0xffffffff, ssrc: 0x8badf00d, marker: true };
const PAYLOAD = Uint8Array.from({ length: 160 }, (_, i) => (i * 7) & 0xff);

describe('parseRtp', () => {
  it('reads what rtp.js writes, including the largest sequence number and timestamp', () => {
    const packet = parseRtp(bytesOf(reference(FIELDS, PAYLOAD)));
    expect(packet).toMatchObject(FIELDS);
    expect([...packet!.payload]).toEqual([...PAYLOAD]);
  });

  it('skips CSRCs, a header extension and padding to find the payload', () => {
    const built = reference({ ...FIELDS, marker: false, payloadType: 8 }, PAYLOAD.subarray(0, 13));
    built.setCsrcs([1, 2, 3]);
    built.enableOneByteExtensions();
    built.setExtension(1, new DataView(new Uint8Array([9, 9, 9]).buffer));
    built.padTo4Bytes();
    const bytes = bytesOf(built);
    expect(bytes[0]! & 0x20).toBe(0x20);
    const packet = parseRtp(bytes)!;
    expect(packet).toMatchObject({ payloadType: 8, marker: false, ssrc: FIELDS.ssrc });
    expect([...packet.payload]).toEqual([...PAYLOAD.subarray(0, 13)]);
  });

  it('gives the payload as a view into the datagram, without copying', () => {
    const bytes = bytesOf(reference(FIELDS, PAYLOAD));
    const packet = parseRtp(bytes)!;
    expect(packet.payload.buffer).toBe(bytes.buffer);
    expect(packet.payload.byteOffset).toBe(bytes.byteOffset + 12);
  });

  it('accepts a header-only packet (empty payload)', () => {
    expect(parseRtp(bytesOf(reference(FIELDS, new Uint8Array(0))))!.payload.length).toBe(0);
  });

  it('returns null for truncated, wrong-version and malformed datagrams', () => {
    const good = bytesOf(reference(FIELDS, PAYLOAD));
    const withByte = (index: number, value: number): Uint8Array => {
      const copy = good.slice();
      copy[index] = value;
      return copy;
    };
    const cases: Record<string, Uint8Array> = {
      empty: new Uint8Array(0),
      'one byte': new Uint8Array([0x80]),
      'eleven bytes': good.subarray(0, 11),
      'version 0': withByte(0, 0x00),
      'version 1': withByte(0, 0x40),
      'version 3': withByte(0, 0xc0),
      'CSRC list past the end': Uint8Array.from([0x8f, ...good.subarray(1, 20)]),
      'extension header past the end': Uint8Array.from([0x90, ...good.subarray(1, 14)]),
      'extension longer than the packet': Uint8Array.from([0x90, ...good.subarray(1, 12), 0xbe, 0xde, 0x00, 0x40]),
      'padding count zero': (() => {
        const copy = withByte(0, 0xa0);
        copy[copy.length - 1] = 0;
        return copy;
      })(),
      'padding longer than the payload': (() => {
        const copy = withByte(0, 0xa0).subarray(0, 16);
        copy[15] = 5;
        return copy;
      })(),
      'RTCP sender report': bytesOf(new SenderReportPacket()),
      'RTCP receiver report': bytesOf(new ReceiverReportPacket()),
      'payload type 64': withByte(1, 64),
      'payload type 95 with marker': withByte(1, 0x80 | 95),
    };
    for (const [name, bytes] of Object.entries(cases)) expect(parseRtp(bytes), name).toBeNull();
    expect(parseRtp(withByte(1, 96))).not.toBeNull();
    expect(parseRtp(withByte(1, 63))).not.toBeNull();
  });

  it('never throws on random and mutated datagrams, and agrees with rtp.js whenever rtp.js accepts one', () => {
    let seed = 42;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    const good = bytesOf(reference(FIELDS, PAYLOAD.subarray(0, 20)));
    let agreed = 0;
    for (let round = 0; round < 5000; round++) {
      let bytes: Uint8Array;
      if (round % 2 === 0) bytes = Uint8Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256));
      else {
        bytes = good.slice(0, Math.floor(random() * (good.length + 1)));
        for (let flips = 0; flips < 3 && bytes.length > 0; flips++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      }
      const ours = parseRtp(bytes);
      let theirs: ReferencePacket | null = null;
      try {
        theirs = new ReferencePacket(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      } catch {
        // rtp.js refuses it; whatever we said is fine as long as we did not throw.
      }
      if (!theirs || (theirs.getPayloadType() >= 64 && theirs.getPayloadType() <= 95)) continue;
      const payload = theirs.getPayload();
      expect(ours).toEqual({
        payloadType: theirs.getPayloadType(),
        sequenceNumber: theirs.getSequenceNumber(),
        timestamp: theirs.getTimestamp(),
        ssrc: theirs.getSsrc(),
        marker: theirs.getMarker(),
        payload: new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength),
      });
      agreed++;
    }
    expect(agreed).toBeGreaterThan(100);
  });
});

describe('serializeRtp', () => {
  it('writes a version 2 fixed header that rtp.js reads back field for field', () => {
    const bytes = serializeRtp({ ...FIELDS, payload: PAYLOAD });
    expect(bytes.length).toBe(172);
    const packet = new ReferencePacket(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    expect(packet.dump()).toMatchObject({ ...FIELDS, csrcs: [], padding: 0, payloadLength: 160 });
    expect([...bytes.subarray(12)]).toEqual([...PAYLOAD]);
    expect([...bytes.subarray(0, 12)]).toEqual([...bytesOf(reference(FIELDS, PAYLOAD)).subarray(0, 12)]);
  });

  it('round-trips through parseRtp', () => {
    const packet: RtpPacket = { payloadType: 101, sequenceNumber: 0, timestamp: 0, ssrc: 0, marker: false, payload: new Uint8Array([1, 2, 3, 4]) };
    const parsed = parseRtp(serializeRtp(packet))!;
    expect({ ...parsed, payload: [...parsed.payload] }).toEqual({ ...packet, payload: [1, 2, 3, 4] });
  });

  it('wraps out-of-range numbers the way the wire does instead of throwing', () => {
    const bytes = serializeRtp({
      payloadType: 128 + 8,
      sequenceNumber: 65536 + 3,
      timestamp: 2 ** 32 + 160,
      ssrc: 2 ** 32 + 1,
      marker: false,
      payload: new Uint8Array(0),
    });
    expect(parseRtp(bytes)).toMatchObject({ payloadType: 8, sequenceNumber: 3, timestamp: 160, ssrc: 1 });
  });
});

describe('isRtcp', () => {
  it('tells RTCP from RTP on a muxed port by the RFC 5761 payload-type range', () => {
    expect(isRtcp(bytesOf(new SenderReportPacket()))).toBe(true);
    expect(isRtcp(bytesOf(new ReceiverReportPacket()))).toBe(true);
    for (const payloadType of [0, 8, 9, 13, 96, 101, 111, 127]) {
      expect(isRtcp(serializeRtp({ ...FIELDS, payloadType, marker: false, payload: PAYLOAD })), `PT ${payloadType}`).toBe(false);
      expect(isRtcp(serializeRtp({ ...FIELDS, payloadType, marker: true, payload: PAYLOAD })), `PT ${payloadType} with marker`).toBe(false);
    }
    // Types 192–223: byte 1 & 0x7f is 64–95.
    for (const type of [192, 200, 201, 203, 206, 223]) expect(isRtcp(Uint8Array.of(0x80, type, 0, 1, 0, 0, 0, 0)), `type ${type}`).toBe(true);
    for (const type of [191, 224]) expect(isRtcp(Uint8Array.of(0x80, type, 0, 1, 0, 0, 0, 0)), `type ${type}`).toBe(false);
  });

  it('says no to short and non-version-2 datagrams without throwing', () => {
    expect(isRtcp(new Uint8Array(0))).toBe(false);
    expect(isRtcp(Uint8Array.of(0x80, 200, 0))).toBe(false);
    expect(isRtcp(Uint8Array.of(0x40, 200, 0, 1))).toBe(false);
    // STUN and DTLS share muxed ports too (RFC 7983): first byte 0–3 and 20–63.
    expect(isRtcp(Uint8Array.of(0x00, 0x01, 0x00, 0x00))).toBe(false);
    expect(isRtcp(Uint8Array.of(22, 0xfe, 0xfd, 0))).toBe(false);
  });
});
