/**
 * The offer/answer state of one call's dialog (RFC 3264): our side of the SDP at its current
 * version, the last description we sent, and what each of the other side's offers means for the
 * media — the INVITE's offer, our offer when the INVITE had none, and the re-INVITEs and UPDATEs
 * of hold, resume, a codec change or a session refresh.
 */
import type { CallMedia } from '../media/media-protocol.js';
import { buildAnswer } from '../sdp/build-answer.js';
import { buildOffer } from '../sdp/build-offer.js';
import type { LocalMedia } from '../sdp/local-media.js';
import { parseOffer } from '../sdp/parse-offer.js';
import { SdpError } from '../sdp/sdp-error.js';
import type { SessionBody } from './call-dialog.js';
import { mediaFromAnswer, mediaFromOffer } from './call-media.js';

/** The content type of every body we negotiate with. */
export const SDP = 'application/sdp';

/** Our side of the SDP apart from the o= line, which the negotiation keeps. */
export type LocalEndpoint = Omit<LocalMedia, 'sessionId' | 'sessionVersion'>;

/** What a re-INVITE or UPDATE changed: the media to use, and whether hold or the codec changed. */
export interface Renegotiated {
  readonly reply: SessionBody;
  readonly media: CallMedia;
  /** The new hold state, when it changed. */
  readonly held?: boolean;
  /** The new codec, when it changed. */
  readonly codec?: CallMedia['codec']['name'];
}

/** One dialog's SDP offers and answers, from our side. */
export class CallNegotiation {
  private sessionVersion = 1;
  private readonly sessionId: string;
  private lastSent: string | null;
  private held = false;

  /**
   * @param endpoint our media address, port and codecs
   * @param signallingAddress where the other side's signalling comes from (for media latching)
   * @param sent the description already sent, for a call we placed (our offer), else null
   */
  constructor(
    private readonly endpoint: () => LocalEndpoint,
    private readonly signallingAddress: string,
    sent: string | null,
  ) {
    this.lastSent = sent;
    // Our o= session stays the one already sent (RFC 3264 section 8: only its version moves).
    const origin = sent === null ? null : parseOffer(sent).origin;
    this.sessionId = origin?.sessionId ?? String(Date.now());
    if (origin) this.sessionVersion = Number(origin.sessionVersion);
  }

  /** The last answer (or, for a call we placed, the offer) we sent; null before any. */
  get sent(): string | null {
    return this.lastSent;
  }

  /**
   * Answers an offer: the media it leads to; {@link sent} is then the answer.
   * @throws SdpError with the status to refuse it with
   */
  answer(offer: SessionBody): CallMedia {
    if (offer.contentType !== SDP) throw new SdpError(488, `the offer is ${offer.contentType}, not ${SDP}`);
    const remote = parseOffer(offer.body.toString('utf8'));
    const answer = buildAnswer(remote, this.local());
    this.lastSent = answer.sdp;
    return mediaFromOffer(remote, answer, this.signallingAddress);
  }

  /** Our offer, for a 200 to an INVITE without one. */
  offer(): string {
    return buildOffer(this.local());
  }

  /**
   * The media from our offer and the other side's answer to it.
   * @throws SdpError when the answer cannot be read or agrees to nothing we offered
   */
  answered(ourOffer: string, answer: SessionBody): CallMedia {
    return mediaFromAnswer(ourOffer, answer.body.toString('utf8'), this.signallingAddress);
  }

  /**
   * A re-INVITE's or UPDATE's offer answered, with what it changed (`currentCodec`: the codec in
   * use until now); without an offer, ours (the last one sent, else a new one).
   * @throws SdpError with the status to refuse it with
   */
  reoffer(offer: SessionBody | null, currentCodec: string): Renegotiated | SessionBody {
    if (!offer) return { contentType: SDP, body: Buffer.from(this.lastSent ?? this.offer()) };
    const remote = parseOffer(offer.body.toString('utf8'));
    let answer = buildAnswer(remote, this.local());
    // Our description changes: its o= version goes up (RFC 3264 section 8).
    if (answer.sdp !== this.lastSent) {
      this.sessionVersion += 1;
      answer = buildAnswer(remote, this.local());
    }
    this.lastSent = answer.sdp;
    const held = answer.direction === 'recvonly' || answer.direction === 'inactive';
    const heldChanged = held !== this.held;
    this.held = held;
    return {
      reply: { contentType: SDP, body: Buffer.from(answer.sdp) },
      media: mediaFromOffer(remote, answer, this.signallingAddress),
      ...(heldChanged ? { held } : {}),
      ...(answer.codec.name !== currentCodec ? { codec: answer.codec.name } : {}),
    };
  }

  /** Our side of the SDP at the current version. */
  private local(): LocalMedia {
    return { ...this.endpoint(), sessionId: this.sessionId, sessionVersion: this.sessionVersion };
  }
}
