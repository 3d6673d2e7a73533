/**
 * Answers to real offers: the codec the offerer prefers among ours, telephone-event at its
 * clock rate, the direction of RFC 3264 §6.1 (hold included), rejected m-lines kept in place,
 * and every answer read back with `parseOffer`.
 */
import { describe, expect, it } from 'vitest';
import { buildAnswer } from '../../../src/telephony/sdp/build-answer.js';
import type { LocalMedia } from '../../../src/telephony/sdp/local-media.js';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { SdpError } from '../../../src/telephony/sdp/sdp-error.js';
import { ASTERISK_HOLD, BARESIP, IPV6, SIPP_UAC, SRTP_THEN_RTP, VIDEO_AUDIO, withAudio, ZERO_ADDRESS_HOLD } from './sdp-fixtures.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', port: 40000, preferences: ['opus', 'PCMA', 'PCMU'], sessionId: '3919372812', sessionVersion: 1 };

describe('buildAnswer', () => {
  it("answers SIPp's offer with PCMU, exactly as expected on the wire", () => {
    const answer = buildAnswer(parseOffer(SIPP_UAC), LOCAL);
    expect(answer.sdp).toBe(
      'v=0\r\no=- 3919372812 1 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n' +
        'm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n',
    );
    expect(answer).toMatchObject({ codec: { name: 'PCMU', payloadType: 0 }, telephoneEvent: null, direction: 'sendrecv' });
  });

  it("follows the offer's order, not ours: opus from baresip with telephone-event at 48000", () => {
    const answer = buildAnswer(parseOffer(BARESIP), { ...LOCAL, preferences: ['PCMU', 'PCMA', 'opus'] });
    expect(answer.codec).toEqual({ name: 'opus', payloadType: 96, clockRate: 48000, channels: 2 });
    expect(answer.telephoneEvent).toBe(101);
    expect(answer.sdp).toContain(
      'm=audio 40000 RTP/AVP 96 101\r\na=rtpmap:96 opus/48000/2\r\na=rtpmap:101 telephone-event/48000\r\na=fmtp:96 useinbandfec=1\r\na=fmtp:101 0-16\r\n',
    );
  });

  it('skips offered codecs that our preferences leave out, and takes telephone-event at the chosen rate', () => {
    const answer = buildAnswer(parseOffer(BARESIP), { ...LOCAL, preferences: ['PCMA'] });
    expect(answer.codec).toEqual({ name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 });
    expect(answer.telephoneEvent).toBe(102);
    const back = parseOffer(answer.sdp);
    expect(back.codecs).toEqual([answer.codec]);
    expect([...back.telephoneEvents]).toEqual([[8000, 102]]);
  });

  it('accepts rtcp-mux when offered (a=rtcp-mux in the answer) and never adds it otherwise', () => {
    const muxed = buildAnswer(parseOffer(withAudio('m=audio 4000 RTP/AVP 0 8', 'a=rtcp-mux')), LOCAL);
    expect(muxed.rtcpMux).toBe(true);
    expect(muxed.sdp).toContain('a=rtcp-mux\r\n');
    expect(parseOffer(muxed.sdp).rtcpMux).toBe(true);
    const plain = buildAnswer(parseOffer(SIPP_UAC), LOCAL);
    expect(plain.rtcpMux).toBe(false);
    expect(plain.sdp).not.toContain('rtcp-mux');
  });

  it('answers an Asterisk hold (sendonly) with recvonly and A-law', () => {
    const answer = buildAnswer(parseOffer(ASTERISK_HOLD), LOCAL);
    expect(answer).toMatchObject({ codec: { name: 'PCMA' }, telephoneEvent: 101, direction: 'recvonly' });
    expect(parseOffer(answer.sdp).direction).toBe('recvonly');
  });

  it('answers a 0.0.0.0 hold with recvonly', () => {
    const answer = buildAnswer(parseOffer(ZERO_ADDRESS_HOLD), LOCAL);
    expect(answer.direction).toBe('recvonly');
    expect(parseOffer(answer.sdp)).toMatchObject({ direction: 'recvonly', holdByZeroAddress: false, address: '192.0.2.10' });
  });

  it.each([
    ['sendrecv', 'sendrecv'],
    ['sendonly', 'recvonly'],
    ['recvonly', 'sendonly'],
    ['inactive', 'inactive'],
  ])('answers %s with %s', (offered, answered) => {
    const answer = buildAnswer(parseOffer(withAudio('m=audio 6000 RTP/AVP 0', `a=${offered}`)), LOCAL);
    expect(answer.direction).toBe(answered);
    expect(answer.sdp).toContain(`a=${answered}\r\n`);
  });

  it('keeps a call we hold on hold when the far end re-offers sendrecv', () => {
    expect(buildAnswer(parseOffer(SIPP_UAC), LOCAL, 'sendonly').direction).toBe('sendonly');
    expect(buildAnswer(parseOffer(ASTERISK_HOLD), LOCAL, 'sendonly').direction).toBe('inactive');
  });

  it('rejects video and T.38 in place, keeping the number of m-lines', () => {
    const answer = buildAnswer(parseOffer(VIDEO_AUDIO), LOCAL);
    expect(answer.sdp.split('\r\n').filter((line) => line.startsWith('m='))).toEqual([
      'm=video 0 RTP/AVPF 96',
      'm=audio 40000 RTP/AVP 96',
      'm=image 0 udptl t38',
    ]);
    // The offer has telephone-event at 8000 only, so with opus at 48000 there is none.
    expect(answer.telephoneEvent).toBeNull();
    expect(parseOffer(answer.sdp)).toMatchObject({ audioIndex: 1, mediaCount: 3, codecs: [{ name: 'opus', payloadType: 96 }] });
  });

  it('rejects the SRTP audio stream of a best-effort offer and answers the plain one', () => {
    const answer = buildAnswer(parseOffer(SRTP_THEN_RTP), LOCAL);
    expect(answer.sdp).toContain('m=audio 0 RTP/SAVP 0\r\nm=audio 40000 RTP/AVP 0\r\n');
  });

  it('echoes RTP/AVPF', () => {
    expect(buildAnswer(parseOffer(withAudio('m=audio 6000 RTP/AVPF 8')), LOCAL).sdp).toContain('m=audio 40000 RTP/AVPF 8\r\n');
  });

  it('answers an IPv6 offer from an IPv6 address, and the answer reads back', () => {
    const answer = buildAnswer(parseOffer(IPV6), { ...LOCAL, address: '2001:db8::10', userName: 'sprachrohr' });
    expect(answer.sdp).toContain('o=sprachrohr 3919372812 1 IN IP6 2001:db8::10\r\n');
    expect(answer.sdp).toContain('c=IN IP6 2001:db8::10\r\n');
    expect(parseOffer(answer.sdp)).toMatchObject({ address: '2001:db8::10', addressFamily: 6, port: 40000, codecs: [{ name: 'PCMA' }], ptime: 20 });
  });

  it('refuses with 488 when no offered codec is among our preferences', () => {
    const refuse = () => buildAnswer(parseOffer(SIPP_UAC), { ...LOCAL, preferences: ['opus', 'PCMA'] });
    expect(refuse).toThrow(SdpError);
    expect(refuse).toThrow(expect.objectContaining({ status: 488, detail: 'none of the offered codecs (PCMU) is enabled here (enabled: opus, PCMA)' }));
  });

  it('refuses local settings that cannot make a valid description', () => {
    const offer = parseOffer(SIPP_UAC);
    expect(() => buildAnswer(offer, { ...LOCAL, address: 'gateway.local' })).toThrow(TypeError);
    expect(() => buildAnswer(offer, { ...LOCAL, port: 0 })).toThrow(RangeError);
    expect(() => buildAnswer(offer, { ...LOCAL, preferences: [] })).toThrow(RangeError);
    expect(() => buildAnswer(offer, { ...LOCAL, sessionId: '12ab' })).toThrow(TypeError);
    expect(() => buildAnswer(offer, { ...LOCAL, sessionVersion: -1 })).toThrow(RangeError);
    expect(() => buildAnswer(offer, { ...LOCAL, userName: 'two words' })).toThrow(TypeError);
  });
});
