/**
 * Our offer, the far end's answer, and what the call then uses: a full loop through
 * `buildOffer`, `parseOffer` and `buildAnswer` standing in for the far end, then hand-written
 * answers that a real endpoint might send, and the answers we must refuse.
 */
import { describe, expect, it } from 'vitest';
import { buildAnswer } from '../../../src/telephony/sdp/build-answer.js';
import { buildOffer } from '../../../src/telephony/sdp/build-offer.js';
import type { LocalMedia } from '../../../src/telephony/sdp/local-media.js';
import { negotiatedFromAnswer } from '../../../src/telephony/sdp/negotiated-from-answer.js';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { SdpError } from '../../../src/telephony/sdp/sdp-error.js';
import { crlf, VIDEO_AUDIO, withAudio } from './sdp-fixtures.js';

const US: LocalMedia = { address: '192.0.2.10', port: 40000, preferences: ['opus', 'PCMA', 'PCMU'], sessionId: '3919372812', sessionVersion: 1 };
const THEM: LocalMedia = { address: '198.51.100.20', port: 20000, preferences: ['PCMA', 'PCMU'], sessionId: '42', sessionVersion: 1 };

/** The error `negotiatedFromAnswer` throws; fails the test when it does not throw one. */
function refusal(run: () => unknown): SdpError {
  try {
    run();
  } catch (error) {
    if (error instanceof SdpError) return error;
    throw error;
  }
  throw new Error('the answer was accepted');
}

describe('negotiatedFromAnswer', () => {
  it('reads the full loop: our offer, their answer, the call', () => {
    const offer = buildOffer(US);
    const answer = buildAnswer(parseOffer(offer), THEM);
    expect(negotiatedFromAnswer(offer, parseOffer(answer.sdp))).toEqual({
      codec: { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 },
      telephoneEvent: 101,
      address: '198.51.100.20',
      port: 20000,
      rtcp: { address: '198.51.100.20', port: 20001 },
      ptime: 20,
      direction: 'sendrecv',
    });
  });

  it('takes the offer already parsed as well as the text', () => {
    const offer = buildOffer(US);
    const answer = parseOffer(buildAnswer(parseOffer(offer), THEM).sdp);
    expect(negotiatedFromAnswer(parseOffer(offer), answer)).toEqual(negotiatedFromAnswer(offer, answer));
  });

  it("uses the first of several answered codecs that we offered, under the answer's payload type", () => {
    const answer = withAudio('m=audio 30000 RTP/AVP 18 97 0 96', 'a=rtpmap:18 G729/8000', 'a=rtpmap:97 opus/48000/2', 'a=rtpmap:96 telephone-event/48000');
    const call = negotiatedFromAnswer(buildOffer(US), parseOffer(answer));
    expect(call).toMatchObject({ codec: { name: 'opus', payloadType: 97 }, telephoneEvent: 96, address: '127.0.0.1', port: 30000 });
  });

  it('has no telephone-event when the answer leaves it out', () => {
    expect(negotiatedFromAnswer(buildOffer(US), parseOffer(withAudio('m=audio 30000 RTP/AVP 0'))).telephoneEvent).toBeNull();
  });

  it('narrows our hold by the answer', () => {
    const hold = buildOffer(US, 'sendonly');
    expect(negotiatedFromAnswer(hold, parseOffer(withAudio('m=audio 30000 RTP/AVP 0', 'a=recvonly'))).direction).toBe('sendonly');
    expect(negotiatedFromAnswer(hold, parseOffer(withAudio('m=audio 30000 RTP/AVP 0', 'a=inactive'))).direction).toBe('inactive');
    // A non-compliant sendrecv answer to our sendonly does not make us receive.
    expect(negotiatedFromAnswer(hold, parseOffer(withAudio('m=audio 30000 RTP/AVP 0'))).direction).toBe('sendonly');
    expect(negotiatedFromAnswer(buildOffer(US), parseOffer(withAudio('m=audio 30000 RTP/AVP 0', 'c=IN IP4 0.0.0.0'))).direction).toBe('recvonly');
  });

  it('refuses with 488 an answer that picks a codec we did not offer', () => {
    const error = refusal(() => negotiatedFromAnswer(buildOffer({ ...US, preferences: ['opus'] }), parseOffer(withAudio('m=audio 30000 RTP/AVP 8 0'))));
    expect(error.status).toBe(488);
    expect(error.detail).toBe('the answer picks none of the offered codecs (answer: PCMA/8000, PCMU/8000; offered: opus/48000)');
  });

  it('refuses with 488 an answer that rejects the audio', () => {
    const error = refusal(() => negotiatedFromAnswer(buildOffer(US), parseOffer(withAudio('m=audio 0 RTP/AVP 0'))));
    expect(error).toMatchObject({ status: 488, detail: 'the audio stream is disabled (port 0)' });
  });

  it('refuses with 400 an answer whose m-lines do not mirror the offer', () => {
    const offer = buildOffer(US, 'sendrecv', parseOffer(VIDEO_AUDIO));
    const tooFew = refusal(() => negotiatedFromAnswer(offer, parseOffer(withAudio('m=audio 30000 RTP/AVP 0'))));
    expect(tooFew).toMatchObject({ status: 400, detail: 'the answer has 1 m-lines for the 3 of the offer (RFC 3264 §6 requires the same number)' });
    const moved = crlf(
      'v=0',
      'o=- 1 1 IN IP4 198.51.100.20',
      's=-',
      'c=IN IP4 198.51.100.20',
      't=0 0',
      'm=audio 30000 RTP/AVP 0',
      'm=video 0 RTP/AVPF 96',
      'm=image 0 udptl t38',
    );
    expect(refusal(() => negotiatedFromAnswer(offer, parseOffer(moved)))).toMatchObject({
      status: 400,
      detail: "the answer's audio stream is m-line 1, the offer's is m-line 2",
    });
  });
});
