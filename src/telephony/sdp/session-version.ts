/**
 * The o= version rule of RFC 3264 §8 for re-INVITEs and UPDATEs: a description that changed
 * carries the previous version plus one; one that did not (a session refresh) keeps it.
 *
 * Both sides apply it to their own descriptions. For the far end's, `isSameSession` tells a
 * refresh from a change; for ours, `nextSessionVersion` compares what we would send with what
 * we sent last, so that our version goes up exactly when our description changes (not merely
 * because the far end's did).
 */
import type { RemoteDescription } from './remote-description.js';

/**
 * True when `next` is the same description as `previous`: same o= user, session id and version,
 * so the offer is a session refresh and media need not be touched. The media we use are compared
 * too, because some endpoints change them without raising the version, and missing such a change
 * costs the call its audio. A changed session id counts as a change (some back-to-back agents
 * renumber after a transfer).
 */
export function isSameSession(previous: RemoteDescription, next: RemoteDescription): boolean {
  const a = previous.origin;
  const b = next.origin;
  // Compared as integers, so leading zeros do not count; the values may exceed 2^53.
  const sameOrigin = a.userName === b.userName && BigInt(a.sessionId) === BigInt(b.sessionId) && BigInt(a.sessionVersion) === BigInt(b.sessionVersion);
  return sameOrigin && mediaKey(previous) === mediaKey(next);
}

function mediaKey(description: RemoteDescription): string {
  const { address, port, rtcp, rtcpMux, protocol, codecs, telephoneEvents, ptime, direction, audioIndex, mediaLines } = description;
  return JSON.stringify([address, port, rtcp, rtcpMux, protocol, codecs, [...telephoneEvents], ptime, direction, audioIndex, mediaLines]);
}

/** What we sent last, and under which o= version. */
export interface SentDescription {
  readonly sdp: string;
  readonly sessionVersion: number;
}

/**
 * Our next description with the right o= version: `build` writes it for a given version (say
 * `(v) => buildAnswer(offer, { ...local, sessionVersion: v }).sdp`); if the result equals what
 * we sent last apart from o=, the version stays, otherwise it goes up by one.
 */
export function nextSessionVersion(previous: SentDescription, build: (sessionVersion: number) => string): SentDescription {
  const same = build(previous.sessionVersion);
  if (withoutOrigin(same) === withoutOrigin(previous.sdp)) return { sdp: same, sessionVersion: previous.sessionVersion };
  const sessionVersion = previous.sessionVersion + 1;
  return { sdp: build(sessionVersion), sessionVersion };
}

function withoutOrigin(sdp: string): string {
  return sdp
    .split(/\r\n|\r|\n/)
    .filter((line) => !line.startsWith('o='))
    .join('\n');
}
