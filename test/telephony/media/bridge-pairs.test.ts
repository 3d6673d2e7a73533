/** Which calls are bridged: a bridge begins once both calls have media, a call is in one bridge at most, and leaving ends it for both. */
import { describe, expect, it } from 'vitest';
import { BridgePairs } from '../../../src/telephony/media/bridge-pairs.js';
import type { BridgeableLeg } from '../../../src/telephony/media/media-bridge.js';

/** A call that records whether it is in a bridge. */
function fakeSession(): BridgeableLeg & { joined: boolean } {
  const session = {
    joined: false,
    media: null as never,
    streamTimestamp: 0,
    transmit: () => undefined,
    joinBridge: () => void (session.joined = true),
    leaveBridge: () => void (session.joined = false),
  };
  return session;
}

describe('BridgePairs', () => {
  it('begins a bridge once both calls have their session, and ends it for both when either leaves', () => {
    const sessions = new Map<number, ReturnType<typeof fakeSession>>();
    const counts: number[] = [];
    const pairs = new BridgePairs(
      (id) => sessions.get(id) ?? null,
      (running) => counts.push(running),
    );
    sessions.set(1, fakeSession());
    pairs.join(1, 2);
    expect(pairs.running).toBe(0);
    sessions.set(2, fakeSession());
    pairs.started(2);
    expect(pairs.running).toBe(1);
    expect(sessions.get(1)!.joined && sessions.get(2)!.joined).toBe(true);
    pairs.leave(2);
    expect(sessions.get(1)!.joined || sessions.get(2)!.joined).toBe(false);
    expect(pairs.running).toBe(0);
    expect(counts).toEqual([1, 0]);
  });

  it('moves a call to a new bridge, freeing its old partner, and ignores bridging a call to itself', () => {
    const sessions = new Map([1, 2, 3].map((id) => [id, fakeSession()] as const));
    const pairs = new BridgePairs(
      (id) => sessions.get(id) ?? null,
      () => undefined,
    );
    pairs.join(1, 2);
    pairs.join(1, 3);
    expect(sessions.get(2)!.joined).toBe(false);
    expect(sessions.get(3)!.joined).toBe(true);
    expect(pairs.running).toBe(1);
    pairs.join(3, 3);
    expect(pairs.running).toBe(1);
    pairs.leave(2);
    expect(pairs.running).toBe(1);
  });
});
