/**
 * The second call of a bridged transfer: a media channel of its own, our offer in an INVITE
 * from the embedded SIP endpoint, and once answered the media negotiated from the callee's
 * answer, ready to be bridged to the caller's.
 */
import type { Logger } from 'pino';
import type { MediaThread } from '../media/media-thread.js';
import { RtpPortsExhausted } from '../media/rtp-port-pool.js';
import { buildOffer } from '../sdp/build-offer.js';
import { SdpError } from '../sdp/sdp-error.js';
import type { SipEndpoint } from '../sip/sip-endpoint.js';
import type { CallCodec } from '../telephony-config.js';
import { mediaFromAnswer } from './call-media.js';
import type { CallPlacer } from './call-transfer.js';

/** What placing a call needs: who does the SIP (null: a drachtio-server, which cannot here), the media thread, our SDP. */
export interface LegParts {
  readonly endpoint: SipEndpoint | null;
  readonly media: MediaThread;
  readonly mediaAddress: string;
  readonly codecs: readonly CallCodec[];
  readonly logger: Logger;
}

const SDP = 'application/sdp';

/** A {@link CallPlacer} on the embedded endpoint. */
export function legPlacer(parts: LegParts): CallPlacer {
  return async (call, signal) => {
    const endpoint = parts.endpoint;
    if (!endpoint) return { failed: 'unsupported' };
    let channel;
    try {
      channel = await parts.media.open();
    } catch (error) {
      if (!(error instanceof RtpPortsExhausted)) throw error;
      parts.logger.warn('no RTP port free for the bridged call');
      return { failed: 503 };
    }
    const offer = buildOffer({
      address: parts.mediaAddress,
      port: channel.port,
      preferences: call.codecs ?? parts.codecs,
      sessionId: String(Date.now()),
      sessionVersion: 1,
    });
    const placed = await endpoint
      .placeCall(
        {
          target: call.target,
          from: call.from,
          headers: call.headers,
          offer: { contentType: SDP, body: Buffer.from(offer) },
          ringTimeoutMs: call.ringTimeoutMs,
          ...(call.credentials ? { credentials: call.credentials } : {}),
          ...(call.tlsCa ? { tlsCa: call.tlsCa } : {}),
        },
        signal,
      )
      .catch(async (error: unknown) => {
        await channel.close();
        throw error;
      });
    if ('failed' in placed) {
      await channel.close();
      return { failed: placed.failed };
    }
    const dialog = placed.answered;
    const hangup = async (reason?: string): Promise<void> => {
      await dialog.hangup(reason);
      await channel.close();
    };
    try {
      if (!placed.answer || placed.answer.contentType !== SDP) throw new SdpError(488, 'the 200 carried no SDP answer to our offer');
      channel.negotiated(mediaFromAnswer(offer, placed.answer.body.toString('utf8'), dialog.peer.address));
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      parts.logger.warn({ target: call.target, detail: error.detail }, 'the bridged call answered with media we cannot take');
      await hangup('no usable media');
      return { failed: 488 };
    }
    const ended = dialog.ended ? Promise.resolve() : new Promise<void>((resolve) => dialog.once('ended', () => resolve()));
    channel.once('lost', () => void hangup('media lost'));
    return { answered: { media: channel, ended, hangup } };
  };
}
