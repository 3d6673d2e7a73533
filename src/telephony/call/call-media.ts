/**
 * A call's media (`CallMedia`, what the media thread is told) from an offer/answer exchange in
 * either direction: the caller's offer and our answer, or our offer and the other side's answer
 * (a call answered with our offer in the 200, or a call we placed).
 */
import type { CallMedia } from '../media/media-protocol.js';
import type { Answer } from '../sdp/build-answer.js';
import { negotiatedFromAnswer } from '../sdp/negotiated-from-answer.js';
import { parseOffer } from '../sdp/parse-offer.js';
import type { RemoteDescription } from '../sdp/remote-description.js';

/** The media from the other side's offer and our answer to it. */
export function mediaFromOffer(offer: RemoteDescription, answer: Answer, signallingAddress: string): CallMedia {
  return {
    codec: answer.codec,
    telephoneEvent: answer.telephoneEvent,
    address: offer.address,
    port: offer.port,
    rtcp: offer.rtcp,
    rtcpMux: answer.rtcpMux,
    direction: answer.direction,
    signallingAddress,
  };
}

/**
 * The media from our offer and the other side's answer (SDP text).
 * @throws SdpError when the answer cannot be read or agrees to nothing we offered
 */
export function mediaFromAnswer(ourOffer: string, answerSdp: string, signallingAddress: string): CallMedia {
  const negotiated = negotiatedFromAnswer(ourOffer, parseOffer(answerSdp));
  return {
    codec: negotiated.codec,
    telephoneEvent: negotiated.telephoneEvent,
    address: negotiated.address,
    port: negotiated.port,
    rtcp: negotiated.rtcp,
    // We offer no rtcp-mux (RFC 5761 would have us take RTCP on both ports until the answer came).
    rtcpMux: false,
    direction: negotiated.direction,
    signallingAddress,
  };
}
