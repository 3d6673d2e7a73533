import type { Prosody } from './types.js';

/** Emphasis as a change of pace: stressed words are spoken more slowly. */
const EMPHASIS_RATE = { strong: 0.8, moderate: 0.9, reduced: 1.1, none: 1 } as const;
/** Emphasis as a change of level, in decibels. */
const EMPHASIS_GAIN_DB = { strong: 3, moderate: 1.5, reduced: -3, none: 0 } as const;

/** Rate multiplier of a delivery, emphasis included. */
export function deliveryRate(prosody: Prosody | undefined): number {
  if (!prosody) return 1;
  return prosody.rate * (prosody.emphasis ? EMPHASIS_RATE[prosody.emphasis] : 1);
}

/** Gain in decibels of a delivery, emphasis included. */
export function deliveryGainDb(prosody: Prosody | undefined): number {
  if (!prosody) return 0;
  return prosody.volumeDb + (prosody.emphasis ? EMPHASIS_GAIN_DB[prosody.emphasis] : 0);
}

/** True when two deliveries sound the same; a missing one is neutral. */
export function sameProsody(a: Prosody | undefined, b: Prosody | undefined): boolean {
  return (
    (a?.rate ?? 1) === (b?.rate ?? 1) &&
    (a?.pitch ?? 1) === (b?.pitch ?? 1) &&
    (a?.volumeDb ?? 0) === (b?.volumeDb ?? 0) &&
    (a?.emphasis ?? null) === (b?.emphasis ?? null)
  );
}

/** Scales PCM16 in place by a gain in decibels, clipping at full scale. */
export function applyGain(pcm: Int16Array, gainDb: number): Int16Array {
  if (gainDb === 0) return pcm;
  const factor = gainDb === -Infinity ? 0 : 10 ** (gainDb / 20);
  for (let i = 0; i < pcm.length; i++) {
    const value = Math.round(pcm[i]! * factor);
    pcm[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
  return pcm;
}
