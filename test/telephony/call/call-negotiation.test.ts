/**
 * One dialog's offer/answer state: the INVITE's offer answered, a refresh answered with the same
 * description, hold and a codec change reported once each with the o= version raised, an
 * offerless re-INVITE given our last description, a placed call's o= session kept, and offers
 * that cannot be answered refused with their status.
 */
import { describe, expect, it } from 'vitest';
import { CallNegotiation, SDP, type LocalEndpoint } from '../../../src/telephony/call/call-negotiation.js';
import { buildOffer } from '../../../src/telephony/sdp/build-offer.js';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { SdpError } from '../../../src/telephony/sdp/sdp-error.js';
import { SIPP_UAC } from '../sdp/sdp-fixtures.js';

const endpoint = (): LocalEndpoint => ({ address: '192.0.2.10', port: 40000, preferences: ['PCMU', 'PCMA'] });
const body = (sdp: string, contentType = SDP) => ({ contentType, body: Buffer.from(sdp) });
const version = (sdp: string) => BigInt(parseOffer(sdp).origin.sessionVersion);
const PCMA_TOO = SIPP_UAC.replace('m=audio 6000 RTP/AVP 0', 'm=audio 6000 RTP/AVP 8 0').replace('a=rtpmap:0', 'a=rtpmap:8 PCMA/8000\r\na=rtpmap:0');

describe('the negotiation of a call', () => {
  it('answers the offer, keeps its answer for a refresh, reports hold and a codec change once each', () => {
    const negotiation = new CallNegotiation(endpoint, '127.0.0.1', null);
    expect(negotiation.sent).toBeNull();
    const media = negotiation.answer(body(SIPP_UAC));
    expect(media).toMatchObject({ codec: { name: 'PCMU' }, address: '127.0.0.1', port: 6000, direction: 'sendrecv', signallingAddress: '127.0.0.1' });
    const first = negotiation.sent!;
    expect(first).toContain('m=audio 40000 RTP/AVP 0');

    // A session refresh (the same offer): the same answer, nothing changed.
    const refresh = negotiation.reoffer(body(SIPP_UAC), 'PCMU');
    expect(refresh).toMatchObject({ media: { codec: { name: 'PCMU' } } });
    expect('reply' in refresh && refresh.reply.body.toString()).toBe(first);
    expect(refresh).not.toHaveProperty('held');
    expect(refresh).not.toHaveProperty('codec');

    // Hold: our answer changes (recvonly), its version goes up by one.
    const hold = negotiation.reoffer(body(SIPP_UAC + 'a=sendonly\r\n'), 'PCMU');
    expect(hold).toMatchObject({ held: true, media: { direction: 'recvonly' } });
    expect(version(negotiation.sent!)).toBe(version(first) + 1n);
    expect(negotiation.reoffer(body(SIPP_UAC + 'a=sendonly\r\n'), 'PCMU')).not.toHaveProperty('held');

    // Resumed, with PCMA offered first: not held any more, and the offer's first codec we take.
    const resumed = negotiation.reoffer(body(PCMA_TOO), 'PCMU');
    expect(resumed).toMatchObject({ held: false, codec: 'PCMA', media: { codec: { name: 'PCMA' }, direction: 'sendrecv' } });
    // Back to PCMU alone: a codec change again, the hold state as it was.
    const pcmu = negotiation.reoffer(body(SIPP_UAC), 'PCMA');
    expect(pcmu).toMatchObject({ codec: 'PCMU', media: { codec: { name: 'PCMU' } } });
    expect(pcmu).not.toHaveProperty('held');

    // A re-INVITE without an offer gets our last description as the offer.
    expect(negotiation.reoffer(null, 'PCMU')).toEqual(body(negotiation.sent!));
  });

  it('offers when the INVITE had no offer, and reads the answer to it', () => {
    const negotiation = new CallNegotiation(endpoint, '127.0.0.1', null);
    const offer = negotiation.offer();
    expect(offer).toMatch(/^m=audio 40000 RTP\/AVP 0 8/m);
    expect(negotiation.answered(offer, body(SIPP_UAC))).toMatchObject({ codec: { name: 'PCMU' }, port: 6000 });
    // Nothing offered yet was sent as an answer: an offerless re-INVITE gets a new offer.
    expect(negotiation.reoffer(null, 'PCMU')).toEqual(body(offer));
  });

  it('keeps the o= session of the offer of a call we placed, and only raises its version', () => {
    const ours = buildOffer({ ...endpoint(), sessionId: '4242', sessionVersion: 1 });
    const negotiation = new CallNegotiation(endpoint, '127.0.0.1', ours);
    const hold = negotiation.reoffer(body(SIPP_UAC + 'a=sendonly\r\n'), 'PCMU');
    expect('reply' in hold && parseOffer(hold.reply.body.toString()).origin).toMatchObject({ sessionId: '4242', sessionVersion: '2' });
  });

  it('refuses what it cannot answer, with the status to refuse it with', () => {
    const negotiation = new CallNegotiation(endpoint, '127.0.0.1', null);
    const status = (run: () => unknown): number | null => {
      try {
        run();
      } catch (error) {
        if (error instanceof SdpError) return error.status;
        throw error;
      }
      return null;
    };
    expect(status(() => negotiation.answer(body(SIPP_UAC, 'text/plain')))).toBe(488);
    expect(status(() => negotiation.answer(body(SIPP_UAC.replace('RTP/AVP 0', 'RTP/AVP 18').replace('a=rtpmap:0 PCMU', 'a=rtpmap:18 G729'))))).toBe(488);
    expect(status(() => negotiation.reoffer(body('v=0\r\n'), 'PCMU'))).toBe(400);
    expect(negotiation.sent).toBeNull();
  });
});
