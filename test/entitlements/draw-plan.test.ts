/**
 * How audio is drawn from an account's entitlements: free minutes first, then credit at its
 * direction's rate, then the commitment; overage on the last; notices at 80 and 95 % of a
 * credit, once; what caps a direction and whether work is cut on reaching it.
 */
import { describe, expect, it } from 'vitest';
import { capOf, noticesCrossed, planDraws } from '../../src/entitlements/draw-plan.js';
import type { EntitlementRecord } from '../../src/store/store.js';

const AT = '2026-11-25T12:00:00.000Z';
const RATES = { tts: 2, stt: 0.5 };

function entitlement(changes: Partial<EntitlementRecord> & Pick<EntitlementRecord, 'id' | 'kind'>): EntitlementRecord {
  return {
    accountId: 'acct_x',
    direction: 'any',
    grantedSeconds: changes.kind === 'credit' ? null : 100,
    grantedCredits: changes.kind === 'credit' ? 100 : null,
    used: 0,
    validUntil: null,
    enforcement: changes.kind === 'committed' ? 'soft' : 'hard',
    createdAt: '2026-11-01T00:00:00.000Z',
    noticesSent: [],
    ...changes,
  };
}

const amounts = (draws: ReturnType<typeof planDraws>) => draws.map(({ entitlement, amount }) => [entitlement.id, amount]);

describe('planDraws', () => {
  it('draws free minutes first, then credit at the direction rate, then the commitment', () => {
    const held = [
      entitlement({ id: 3, kind: 'committed', grantedSeconds: 1000 }),
      entitlement({ id: 2, kind: 'credit', grantedCredits: 10 }),
      entitlement({ id: 1, kind: 'evaluation', grantedSeconds: 60, used: 55 }),
    ];
    // 5 s of evaluation, then 10 credits = 5 s of tts at 2 credits a second, then 10 s of the commitment.
    expect(amounts(planDraws(held, 'tts', 20, RATES, AT))).toEqual([
      [1, 5],
      [2, 10],
      [3, 10],
    ]);
    // stt costs 0.5 credits a second: 10 credits are 20 s.
    expect(amounts(planDraws(held, 'stt', 20, RATES, AT))).toEqual([
      [1, 5],
      [2, 7.5],
    ]);
  });

  it('skips what has ended or is for the other direction, takes the one ending soonest first, and puts overage on the last', () => {
    const held = [
      entitlement({ id: 1, kind: 'evaluation', validUntil: '2026-11-01T00:00:00.000Z' }), // ended
      entitlement({ id: 2, kind: 'evaluation', direction: 'stt' }),
      entitlement({ id: 3, kind: 'credit', grantedCredits: 4, validUntil: '2027-01-01T00:00:00.000Z' }),
      entitlement({ id: 4, kind: 'credit', grantedCredits: 4, validUntil: '2026-12-01T00:00:00.000Z' }),
    ];
    // 4 credits of #4 (2 s), 4 of #3 (2 s), and the 1 s beyond both on #3, the last: 2 credits.
    expect(amounts(planDraws(held, 'tts', 5, RATES, AT))).toEqual([
      [4, 4],
      [3, 6],
    ]);
    expect(planDraws([entitlement({ id: 5, kind: 'evaluation', direction: 'stt' })], 'tts', 5, RATES, AT)).toEqual([]);
  });

  it('crosses each notice threshold of a credit once', () => {
    const credit = entitlement({ id: 1, kind: 'credit', grantedCredits: 100, used: 70 });
    expect(noticesCrossed(credit, 5)).toEqual([]);
    expect(noticesCrossed(credit, 12)).toEqual([80]);
    expect(noticesCrossed(credit, 40)).toEqual([80, 95]);
    expect(noticesCrossed({ ...credit, noticesSent: [80] }, 40)).toEqual([95]);
    expect(noticesCrossed(entitlement({ id: 2, kind: 'evaluation', used: 99 }), 1)).toEqual([]);
  });
});

describe('capOf', () => {
  it('leaves an account without entitlements uncapped', () => {
    expect(capOf([], 'tts', RATES, AT)).toEqual({ seconds: Number.POSITIVE_INFINITY, cutsMidway: false, exhausted: null });
  });

  it('caps by what evaluation and hard credit leave; only evaluation alone cuts work midway', () => {
    const evaluation = entitlement({ id: 1, kind: 'evaluation', grantedSeconds: 60, used: 20 });
    expect(capOf([evaluation], 'tts', RATES, AT)).toMatchObject({ seconds: 40, cutsMidway: true, exhausted: null });
    const credit = entitlement({ id: 2, kind: 'credit', grantedCredits: 10 });
    expect(capOf([evaluation, credit], 'tts', RATES, AT)).toMatchObject({ seconds: 45, cutsMidway: false });
    expect(capOf([{ ...evaluation, used: 60 }], 'stt', RATES, AT).exhausted).toMatch(/evaluation #1 is used up/);
  });

  it('does not cap under a commitment or a soft entitlement, and refuses a direction nothing covers', () => {
    expect(capOf([entitlement({ id: 1, kind: 'committed', used: 500 })], 'tts', RATES, AT).seconds).toBe(Number.POSITIVE_INFINITY);
    expect(capOf([entitlement({ id: 1, kind: 'credit', used: 500, enforcement: 'soft' })], 'tts', RATES, AT).seconds).toBe(Number.POSITIVE_INFINITY);
    const sttOnly = capOf([entitlement({ id: 1, kind: 'evaluation', direction: 'stt' })], 'tts', RATES, AT);
    expect(sttOnly.seconds).toBe(0);
    expect(sttOnly.exhausted).toMatch(/no entitlement of the account covers tts/);
  });
});
