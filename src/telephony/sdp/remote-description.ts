import type { Direction } from './direction.js';
import type { MediaCodec } from './media-codec.js';

/** One m-line as the answer has to mirror it: an answer rejects a stream by echoing these with port 0. */
export interface MediaLine {
  /** `audio`, `video`, `image`, `application`, … */
  readonly type: string;
  readonly port: number;
  readonly protocol: string;
  /** The first format of the line, which a rejection repeats (RFC 3264 §6: at least one format). */
  readonly firstFormat: string;
}

/** The audio protocols we accept (see `parseOffer` for why AVPF is one of them). */
export type AudioProtocol = 'RTP/AVP' | 'RTP/AVPF';

/**
 * What we need from the far end's session description (an offer, or an answer to ours): where
 * its audio is and how it wants it. Only codecs we support are listed.
 */
export interface RemoteDescription {
  /** Where to send RTP: the media-level c= address, else the session-level one. */
  readonly address: string;
  readonly addressFamily: 4 | 6;
  /** RTP port of the audio stream (1–65535). */
  readonly port: number;
  /** Where to send RTCP: a=rtcp (RFC 3605) when given, else the RTP port plus one on the RTP address. */
  readonly rtcp: { readonly address: string; readonly port: number };
  /** a=rtcp-mux (RFC 5761): the far end sends and takes RTCP on the RTP port. */
  readonly rtcpMux: boolean;
  readonly protocol: AudioProtocol;
  /** Supported codecs in the order the description lists them (its preference); never empty. */
  readonly codecs: readonly MediaCodec[];
  /** telephone-event payload type by clock rate, for the rates we use (8000 and 48000). */
  readonly telephoneEvents: ReadonlyMap<number, number>;
  /** Packetisation time in ms the far end wants to receive (a=ptime, default 20). */
  readonly ptime: number;
  /**
   * The far end's direction: media-level attribute, else session-level, else sendrecv, and
   * with a 0.0.0.0 address receiving taken away (so that old-style hold needs no special case).
   */
  readonly direction: Direction;
  /** True when the address is 0.0.0.0 (or ::): the RFC 2543 way of putting a call on hold. */
  readonly holdByZeroAddress: boolean;
  /** Index of the audio m-line we use among all m-lines. */
  readonly audioIndex: number;
  /** Number of m-lines; an answer must have exactly as many (RFC 3264 §6). */
  readonly mediaCount: number;
  /** All m-lines in order, the audio one included. */
  readonly mediaLines: readonly MediaLine[];
  /** The o= line's fields; session id and version as the digits written, because they may exceed 2^53. */
  readonly origin: { readonly userName: string; readonly sessionId: string; readonly sessionVersion: string };
}
