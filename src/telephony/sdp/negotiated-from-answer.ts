import { complement, type Direction } from './direction.js';
import { type MediaCodec, sameCodec } from './media-codec.js';
import { parseOffer } from './parse-offer.js';
import type { RemoteDescription } from './remote-description.js';
import { SdpError } from './sdp-error.js';

/** What an answer to our offer settles for the call. */
export interface NegotiatedMedia {
  /** The codec, under the answer's payload type: each side sends with the types its peer declared. */
  readonly codec: MediaCodec;
  /** The answer's telephone-event payload type at the codec's clock rate, when both sides have it. */
  readonly telephoneEvent: number | null;
  /** Where to send RTP. */
  readonly address: string;
  readonly port: number;
  /** Where to send RTCP. */
  readonly rtcp: RemoteDescription['rtcp'];
  /** Packetisation time in ms the far end wants to receive. */
  readonly ptime: number;
  /** Our direction: what we offered, narrowed by what the answer allows. */
  readonly direction: Direction;
}

/**
 * Checks the far end's answer against the offer we sent (as sent, or already parsed) and reads
 * the call's media from it. Of the answer's codecs the first that we offered is used; an answer
 * may legitimately list more than one (RFC 3264 §6.1).
 *
 * @throws SdpError 400 when the answer does not mirror the offer's m-lines (count, audio
 *   position); 488 when it picks no codec we offered (or, from parsing, rejects the audio).
 */
export function negotiatedFromAnswer(ourOffer: string | RemoteDescription, answer: RemoteDescription): NegotiatedMedia {
  const offer = typeof ourOffer === 'string' ? parseOffer(ourOffer) : ourOffer;
  if (answer.mediaCount !== offer.mediaCount) {
    throw new SdpError(400, `the answer has ${answer.mediaCount} m-lines for the ${offer.mediaCount} of the offer (RFC 3264 §6 requires the same number)`);
  }
  if (answer.audioIndex !== offer.audioIndex) {
    throw new SdpError(400, `the answer's audio stream is m-line ${answer.audioIndex + 1}, the offer's is m-line ${offer.audioIndex + 1}`);
  }
  const codec = answer.codecs.find((candidate) => offer.codecs.some((offered) => sameCodec(offered, candidate)));
  if (!codec) {
    const names = (codecs: readonly MediaCodec[]) => codecs.map((c) => `${c.name}/${c.clockRate}`).join(', ');
    throw new SdpError(488, `the answer picks none of the offered codecs (answer: ${names(answer.codecs)}; offered: ${names(offer.codecs)})`);
  }
  const telephoneEvent = offer.telephoneEvents.has(codec.clockRate) ? (answer.telephoneEvents.get(codec.clockRate) ?? null) : null;
  return {
    codec,
    telephoneEvent,
    address: answer.address,
    port: answer.port,
    rtcp: answer.rtcp,
    ptime: answer.ptime,
    direction: complement(answer.direction, offer.direction),
  };
}
