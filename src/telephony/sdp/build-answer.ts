import { complement, type Direction } from './direction.js';
import { assertLocalMedia, type LocalMedia } from './local-media.js';
import type { MediaCodec } from './media-codec.js';
import type { RemoteDescription } from './remote-description.js';
import { SdpError } from './sdp-error.js';
import { writeDescription } from './write-description.js';

/** Our answer and what it settles for the call. */
export interface Answer {
  /** The answer to send (CRLF line ends). */
  readonly sdp: string;
  /** The codec of the call, under the offer's payload type (used in both directions). */
  readonly codec: MediaCodec;
  /** The offer's telephone-event payload type at the codec's clock rate, or null when not offered. */
  readonly telephoneEvent: number | null;
  /** Our direction, as written in the answer. */
  readonly direction: Direction;
  /** RTCP shares the RTP port (RFC 5761): offered, and accepted whenever offered. */
  readonly rtcpMux: boolean;
}

/**
 * Answers an offer (RFC 3264 §6) with exactly one codec, so that the far end cannot switch
 * codecs mid-call. The codec is the first in the OFFER's order that is also in
 * `local.preferences`: the offerer's preference wins, which is what RFC 3264 §6.1 recommends
 * and what gateways and PBXs in front of us expect; our own order only decides which codecs
 * are allowed at all. telephone-event is included with the offer's payload type when offered at
 * the codec's clock rate, and a=rtcp-mux when offered (one port less through the caller's NAT). Every m-line but the audio one is rejected in place (port 0), so the
 * answer has as many m-lines as the offer.
 *
 * The answer's o= carries `local.sessionVersion` as given; see `nextSessionVersion` for when it
 * has to go up in a re-INVITE.
 *
 * @param want the direction we would like; the answer never exceeds what the offer allows.
 *   Pass `sendonly` while we hold the call so that a far-end re-offer does not take it off hold.
 * @throws SdpError 488 when none of the offered codecs is among our preferences.
 */
export function buildAnswer(offer: RemoteDescription, local: LocalMedia, want: Direction = 'sendrecv'): Answer {
  assertLocalMedia(local);
  const codec = offer.codecs.find((candidate) => local.preferences.includes(candidate.name));
  if (!codec) {
    const offered = offer.codecs.map((candidate) => candidate.name).join(', ');
    throw new SdpError(488, `none of the offered codecs (${offered}) is enabled here (enabled: ${local.preferences.join(', ')})`);
  }
  const telephoneEvent = offer.telephoneEvents.get(codec.clockRate) ?? null;
  const direction = complement(offer.direction, want);
  const telephoneEvents = telephoneEvent === null ? [] : [{ payloadType: telephoneEvent, clockRate: codec.clockRate }];
  const sdp = writeDescription(
    local,
    { protocol: offer.protocol, codecs: [codec], telephoneEvents, direction, rtcpMux: offer.rtcpMux },
    offer.mediaLines,
    offer.audioIndex,
  );
  return { sdp, codec, telephoneEvent, direction, rtcpMux: offer.rtcpMux };
}
