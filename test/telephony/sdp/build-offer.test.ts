/**
 * Our offers, for an INVITE without SDP and for our re-INVITEs (hold): every preferred codec
 * under its fixed payload type, telephone-event per clock rate, ptime 20, the session's m-line
 * layout kept, and each offer read back with `parseOffer`.
 */
import { describe, expect, it } from 'vitest';
import { buildOffer } from '../../../src/telephony/sdp/build-offer.js';
import type { LocalMedia } from '../../../src/telephony/sdp/local-media.js';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { VIDEO_AUDIO } from './sdp-fixtures.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', port: 40000, preferences: ['opus', 'PCMA', 'PCMU'], sessionId: '3919372812', sessionVersion: 7 };

describe('buildOffer', () => {
  it('offers every preference in order, then telephone-event at 8000 and 48000', () => {
    const sdp = buildOffer(LOCAL);
    expect(sdp).toBe(
      [
        'v=0',
        'o=- 3919372812 7 IN IP4 192.0.2.10',
        's=-',
        'c=IN IP4 192.0.2.10',
        't=0 0',
        'm=audio 40000 RTP/AVP 111 8 0 101 102',
        'a=rtpmap:111 opus/48000/2',
        'a=rtpmap:8 PCMA/8000',
        'a=rtpmap:0 PCMU/8000',
        'a=rtpmap:101 telephone-event/8000',
        'a=rtpmap:102 telephone-event/48000',
        'a=fmtp:111 useinbandfec=1',
        'a=fmtp:101 0-16',
        'a=fmtp:102 0-16',
        'a=ptime:20',
        'a=sendrecv',
        '',
      ].join('\r\n'),
    );
    const back = parseOffer(sdp);
    expect(back.codecs.map((codec) => `${codec.payloadType} ${codec.name}/${codec.clockRate}/${codec.channels}`)).toEqual([
      '111 opus/48000/2',
      '8 PCMA/8000/1',
      '0 PCMU/8000/1',
    ]);
    expect([...back.telephoneEvents]).toEqual([
      [8000, 101],
      [48000, 102],
    ]);
    expect(back).toMatchObject({
      address: '192.0.2.10',
      port: 40000,
      ptime: 20,
      direction: 'sendrecv',
      mediaCount: 1,
      origin: { sessionId: '3919372812', sessionVersion: '7' },
    });
  });

  it('offers telephone-event only at the clock rates of the offered codecs', () => {
    expect([...parseOffer(buildOffer({ ...LOCAL, preferences: ['PCMA'] })).telephoneEvents]).toEqual([[8000, 101]]);
    expect([...parseOffer(buildOffer({ ...LOCAL, preferences: ['opus'] })).telephoneEvents]).toEqual([[48000, 102]]);
  });

  it('puts the call on hold with sendonly', () => {
    const sdp = buildOffer({ ...LOCAL, sessionVersion: 8 }, 'sendonly');
    expect(sdp).toContain('a=sendonly\r\n');
    expect(parseOffer(sdp)).toMatchObject({ direction: 'sendonly', origin: { sessionVersion: '8' } });
  });

  it('writes IPv6', () => {
    const sdp = buildOffer({ ...LOCAL, address: '2001:db8::10' });
    expect(sdp).toContain('o=- 3919372812 7 IN IP6 2001:db8::10\r\n');
    expect(parseOffer(sdp)).toMatchObject({ address: '2001:db8::10', addressFamily: 6 });
  });

  it("keeps the session's m-lines in place in a re-offer", () => {
    const sdp = buildOffer(LOCAL, 'sendonly', parseOffer(VIDEO_AUDIO));
    expect(sdp.split('\r\n').filter((line) => line.startsWith('m='))).toEqual([
      'm=video 0 RTP/AVPF 96',
      'm=audio 40000 RTP/AVP 111 8 0 101 102',
      'm=image 0 udptl t38',
    ]);
    expect(parseOffer(sdp)).toMatchObject({ audioIndex: 1, mediaCount: 3, direction: 'sendonly' });
  });
});
