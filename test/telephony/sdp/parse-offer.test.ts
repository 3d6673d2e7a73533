/**
 * Reading offers as endpoints send them: the audio address and port, codecs in offer order,
 * telephone-event per clock rate, ptime, direction (with the 0.0.0.0 hold), the m-line layout
 * and the o= fields; then tolerance of LF line ends and of streams we cannot use beside one we can.
 */
import { describe, expect, it } from 'vitest';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { ASTERISK_HOLD, BARESIP, crlf, IPV6, SIPP_UAC, SRTP_THEN_RTP, VIDEO_AUDIO, withAudio, ZERO_ADDRESS_HOLD } from './sdp-fixtures.js';

const PCMU = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 };
const PCMA = { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 };

describe('parseOffer on real offers', () => {
  it("reads SIPp's default uac offer", () => {
    expect(parseOffer(SIPP_UAC)).toEqual({
      address: '127.0.0.1',
      addressFamily: 4,
      port: 6000,
      rtcp: { address: '127.0.0.1', port: 6001 },
      rtcpMux: false,
      protocol: 'RTP/AVP',
      codecs: [PCMU],
      telephoneEvents: new Map(),
      ptime: 20,
      direction: 'sendrecv',
      holdByZeroAddress: false,
      audioIndex: 0,
      mediaCount: 1,
      mediaLines: [{ type: 'audio', port: 6000, protocol: 'RTP/AVP', firstFormat: '0' }],
      origin: { userName: 'user1', sessionId: '53655765', sessionVersion: '2353687637' },
    });
  });

  it('reads opus, both G.711 laws and telephone-event at 8000 and 48000 from baresip', () => {
    const offer = parseOffer(BARESIP);
    expect(offer.codecs).toEqual([{ name: 'opus', payloadType: 96, clockRate: 48000, channels: 2 }, PCMU, PCMA]);
    expect([...offer.telephoneEvents]).toEqual([
      [48000, 101],
      [8000, 102],
    ]);
    expect(offer).toMatchObject({
      address: '192.168.1.20',
      port: 10046,
      ptime: 20,
      direction: 'sendrecv',
      origin: { userName: '-', sessionId: '1681928342', sessionVersion: '2874563019' },
    });
  });

  it('reads an Asterisk hold: A-law first and sendonly', () => {
    const offer = parseOffer(ASTERISK_HOLD);
    expect(offer.codecs.map((codec) => codec.name)).toEqual(['PCMA', 'PCMU']);
    expect(offer.telephoneEvents.get(8000)).toBe(101);
    expect(offer.direction).toBe('sendonly');
    expect(offer.holdByZeroAddress).toBe(false);
  });

  it('takes c=0.0.0.0 as hold: the far end does not receive', () => {
    const offer = parseOffer(ZERO_ADDRESS_HOLD);
    expect(offer).toMatchObject({ address: '0.0.0.0', holdByZeroAddress: true, direction: 'sendonly' });
    // A zero address on top of recvonly leaves nothing flowing at all.
    expect(parseOffer(ZERO_ADDRESS_HOLD.replace('a=fmtp:101 0-16', 'a=fmtp:101 0-16\r\na=recvonly')).direction).toBe('inactive');
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'c=IN IP6 ::')).holdByZeroAddress).toBe(true);
  });

  it('reads IPv6 addresses', () => {
    const offer = parseOffer(IPV6);
    expect(offer).toMatchObject({ address: '::1', addressFamily: 6, port: 49170, rtcp: { address: '::1', port: 49171 }, holdByZeroAddress: false });
    expect(offer.codecs).toEqual([PCMA, PCMU]);
  });

  it('finds the audio m-line among video and image and lists every m-line', () => {
    const offer = parseOffer(VIDEO_AUDIO);
    expect(offer.audioIndex).toBe(1);
    expect(offer.mediaCount).toBe(3);
    expect(offer.mediaLines).toEqual([
      { type: 'video', port: 9078, protocol: 'RTP/AVPF', firstFormat: '96' },
      { type: 'audio', port: 7078, protocol: 'RTP/AVP', firstFormat: '96' },
      { type: 'image', port: 0, protocol: 'udptl', firstFormat: 't38' },
    ]);
    // The video's rtpmap for 96 (VP8) must not leak into the audio's 96 (opus); speex is skipped.
    expect(offer.codecs.map((codec) => `${codec.payloadType} ${codec.name}`)).toEqual(['96 opus', '0 PCMU', '8 PCMA']);
  });

  it('takes the first usable audio stream when an SRTP one comes first', () => {
    const offer = parseOffer(SRTP_THEN_RTP);
    expect(offer).toMatchObject({ audioIndex: 1, mediaCount: 2, port: 5006, protocol: 'RTP/AVP' });
  });

  it('accepts RTP/AVPF audio and reports it, so that the answer can echo it', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVPF 0', 'a=rtcp-fb:0 nack')).protocol).toBe('RTP/AVPF');
  });
});

describe('parseOffer details', () => {
  it('lets the media-level direction beat the session-level one', () => {
    const sessionOnly = crlf('v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'a=inactive', 'm=audio 4000 RTP/AVP 0');
    expect(parseOffer(sessionOnly).direction).toBe('inactive');
    expect(parseOffer(sessionOnly.replace('m=audio 4000 RTP/AVP 0\r\n', 'm=audio 4000 RTP/AVP 0\r\na=recvonly\r\n')).direction).toBe('recvonly');
  });

  it('lets the media-level c= beat the session-level one', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'c=IN IP4 192.0.2.99')).address).toBe('192.0.2.99');
  });

  it('tolerates LF-only line ends, blank lines and trailing spaces', () => {
    const lf = SIPP_UAC.replaceAll('\r\n', '\n').replace('s=-', 's=- \n');
    expect(parseOffer(lf)).toEqual(parseOffer(SIPP_UAC));
  });

  it('knows the static payload types without rtpmap and encoding names in any case', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 8 0')).codecs).toEqual([PCMA, PCMU]);
    const dynamic = parseOffer(withAudio('m=audio 4000 RTP/AVP 98 99', 'a=rtpmap:98 pcmu/8000', 'a=rtpmap:99 OPUS/48000'));
    expect(dynamic.codecs).toEqual([
      { name: 'PCMU', payloadType: 98, clockRate: 8000, channels: 1 },
      { name: 'opus', payloadType: 99, clockRate: 48000, channels: 2 },
    ]);
  });

  it('trusts an explicit rtpmap over the static table and skips variants we do not decode', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0 8', 'a=rtpmap:0 PCMA/8000')).codecs.map((codec) => codec.name)).toEqual(['PCMA', 'PCMA']);
    const variants = withAudio('m=audio 4000 RTP/AVP 96 97 98 0', 'a=rtpmap:96 PCMU/16000', 'a=rtpmap:97 opus/48000/1', 'a=rtpmap:98 PCMA/8000/2');
    expect(parseOffer(variants).codecs).toEqual([PCMU]);
  });

  it('keeps the first telephone-event per clock rate and ignores other rates', () => {
    const offer = parseOffer(
      withAudio(
        'm=audio 4000 RTP/AVP 0 100 101 102',
        'a=rtpmap:100 telephone-event/16000',
        'a=rtpmap:101 telephone-event/8000',
        'a=rtpmap:102 telephone-event/8000',
      ),
    );
    expect([...offer.telephoneEvents]).toEqual([[8000, 101]]);
  });

  it('reads a=ptime at media or session level and ignores nonsense', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=ptime:30')).ptime).toBe(30);
    expect(parseOffer(crlf('v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'a=ptime:40', 'm=audio 4000 RTP/AVP 0')).ptime).toBe(40);
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=ptime:0')).ptime).toBe(20);
  });

  it('reads a=rtcp-mux (RFC 5761): RTCP on the RTP port', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=rtcp-mux')).rtcpMux).toBe(true);
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=rtcp:4001')).rtcpMux).toBe(false);
  });

  it('reads a=rtcp (RFC 3605) for where RTCP goes', () => {
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=rtcp:53020 IN IP4 192.0.2.77')).rtcp).toEqual({ address: '192.0.2.77', port: 53020 });
    expect(parseOffer(withAudio('m=audio 4000 RTP/AVP 0', 'a=rtcp:53020')).rtcp).toEqual({ address: '127.0.0.1', port: 53020 });
  });

  it('keeps o= numbers beyond 2^53 exact', () => {
    const big = SIPP_UAC.replace('53655765 2353687637', '18446744073709551615 9007199254740993');
    expect(parseOffer(big).origin).toEqual({ userName: 'user1', sessionId: '18446744073709551615', sessionVersion: '9007199254740993' });
  });
});
