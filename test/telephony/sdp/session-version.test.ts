/**
 * The o= version rule of RFC 3264 §8: telling a session refresh from a changed re-offer, and
 * raising our own version exactly when our description changes.
 */
import { describe, expect, it } from 'vitest';
import { buildAnswer } from '../../../src/telephony/sdp/build-answer.js';
import type { LocalMedia } from '../../../src/telephony/sdp/local-media.js';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { isSameSession, nextSessionVersion } from '../../../src/telephony/sdp/session-version.js';
import { ASTERISK_HOLD, SIPP_UAC } from './sdp-fixtures.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', port: 40000, preferences: ['PCMA', 'PCMU'], sessionId: '3919372812', sessionVersion: 1 };

describe('isSameSession', () => {
  it('sees a refresh when the o= line is unchanged', () => {
    expect(isSameSession(parseOffer(SIPP_UAC), parseOffer(SIPP_UAC.replace('m=audio', 'a=x-refresh:1\r\nm=audio')))).toBe(true);
  });

  it('sees a change when the version, session id or user differs', () => {
    const first = parseOffer(SIPP_UAC);
    expect(isSameSession(first, parseOffer(SIPP_UAC.replace('2353687637', '2353687638')))).toBe(false);
    expect(isSameSession(first, parseOffer(SIPP_UAC.replace('53655765', '53655766')))).toBe(false);
    expect(isSameSession(first, parseOffer(SIPP_UAC.replace('o=user1', 'o=user2')))).toBe(false);
  });

  it('sees a change of media even when the far end forgot to raise the version', () => {
    expect(isSameSession(parseOffer(SIPP_UAC), parseOffer(SIPP_UAC.replace('m=audio 6000', 'm=audio 6002')))).toBe(false);
    expect(isSameSession(parseOffer(SIPP_UAC), parseOffer(SIPP_UAC + 'a=sendonly\r\n'))).toBe(false);
  });

  it('compares versions as integers, beyond 2^53 and with leading zeros', () => {
    const at = (version: string) => parseOffer(SIPP_UAC.replace('2353687637', version));
    expect(isSameSession(at('9007199254740993'), at('9007199254740992'))).toBe(false);
    expect(isSameSession(at('0042'), at('42'))).toBe(true);
  });
});

describe('nextSessionVersion', () => {
  const answerTo = (offer: string) => (sessionVersion: number) => buildAnswer(parseOffer(offer), { ...LOCAL, sessionVersion }).sdp;

  it('keeps our version when our answer to a re-INVITE is unchanged', () => {
    const first = { sdp: answerTo(SIPP_UAC)(1), sessionVersion: 1 };
    const refreshed = nextSessionVersion(first, answerTo(SIPP_UAC));
    expect(refreshed).toEqual(first);
  });

  it('raises our version by one when our answer changes (the far end puts us on hold)', () => {
    const first = { sdp: answerTo(SIPP_UAC)(1), sessionVersion: 1 };
    const held = nextSessionVersion(first, answerTo(ASTERISK_HOLD));
    expect(held.sessionVersion).toBe(2);
    expect(parseOffer(held.sdp)).toMatchObject({ direction: 'recvonly', origin: { sessionVersion: '2' } });
    // And back off hold: changed again.
    expect(nextSessionVersion(held, answerTo(SIPP_UAC)).sessionVersion).toBe(3);
  });
});
