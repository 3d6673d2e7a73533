import type { Direction } from './direction.js';
import { assertLocalMedia, type LocalMedia } from './local-media.js';
import { canonical, OFFER_PAYLOAD_TYPES } from './media-codec.js';
import type { MediaLine, RemoteDescription } from './remote-description.js';
import { writeDescription } from './write-description.js';

/** The m-lines of an established session, which a re-offer has to keep in place (RFC 3264 §8). */
export type SessionLayout = Pick<RemoteDescription, 'mediaLines' | 'audioIndex'>;

/**
 * Our offer: for an INVITE that came without SDP (we offer in the 200 OK and the answer comes
 * in the ACK), and for our own re-INVITEs, such as putting the call on hold with `sendonly`.
 *
 * All preferred codecs are offered in preference order, under fixed payload types (PCMU 0,
 * PCMA 8, opus 111), then telephone-event: 101 at 8000 Hz when a G.711 codec is offered and 102
 * at 48000 Hz when opus is, since DTMF only travels at the clock rate of the codec in use.
 *
 * @param layout the session's m-lines, for a re-INVITE: a re-offer keeps every m-line of the
 *   session at its index, other than audio with port 0, and the audio m-line's protocol.
 *   Without it the offer has one audio m-line over RTP/AVP.
 */
export function buildOffer(local: LocalMedia, direction: Direction = 'sendrecv', layout?: SessionLayout): string {
  assertLocalMedia(local);
  const names = [...new Set(local.preferences)];
  const codecs = names.map((name) => canonical(name, OFFER_PAYLOAD_TYPES[name]));
  const telephoneEvents: Array<{ payloadType: number; clockRate: number }> = [];
  if (names.includes('PCMU') || names.includes('PCMA')) telephoneEvents.push({ payloadType: OFFER_PAYLOAD_TYPES.telephoneEvent8000, clockRate: 8000 });
  if (names.includes('opus')) telephoneEvents.push({ payloadType: OFFER_PAYLOAD_TYPES.telephoneEvent48000, clockRate: 48000 });
  const audioLine: MediaLine = layout?.mediaLines[layout.audioIndex] ?? { type: 'audio', port: local.port, protocol: 'RTP/AVP', firstFormat: '0' };
  const protocol = audioLine.protocol.toUpperCase() === 'RTP/AVPF' ? 'RTP/AVPF' : 'RTP/AVP';
  const lines = layout ? layout.mediaLines : [audioLine];
  const audioIndex = layout ? layout.audioIndex : 0;
  return writeDescription(local, { protocol, codecs, telephoneEvents, direction }, lines, audioIndex);
}
