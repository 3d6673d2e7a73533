/**
 * Our session descriptions, offers and answers alike, written with `sdp-transform`: one
 * session-level c= with our address, one audio m-line with its codecs, and any other m-lines
 * of the session rejected in place.
 */
import { write, type MediaDescription } from 'sdp-transform';
import { isIP } from 'node:net';
import type { Direction } from './direction.js';
import type { LocalMedia } from './local-media.js';
import { type MediaCodec, OPUS_FMTP, TELEPHONE_EVENT_FMTP } from './media-codec.js';
import type { MediaLine } from './remote-description.js';

/** The packetisation time we ask for: 20 ms is what every SIP endpoint supports. */
export const LOCAL_PTIME_MS = 20;

/** Our audio m-line. */
export interface LocalAudio {
  readonly protocol: string;
  readonly codecs: readonly MediaCodec[];
  /** telephone-event payload types with their clock rates, written after the codecs. */
  readonly telephoneEvents: ReadonlyArray<{ readonly payloadType: number; readonly clockRate: number }>;
  readonly direction: Direction;
  /** Writes a=rtcp-mux (RFC 5761): RTCP on the RTP port, in an answer to an offer that has it. */
  readonly rtcpMux?: boolean;
}

/** A whole description: `lines` holds our audio m-line at `audioIndex` and rejections elsewhere. */
export function writeDescription(local: LocalMedia, audio: LocalAudio, lines: readonly MediaLine[], audioIndex: number): string {
  const family = isIP(local.address) === 6 ? 6 : 4;
  const media = lines.map((line, index) => (index === audioIndex ? audioMedia(local.port, audio) : rejected(line)));
  return write({
    version: 0,
    origin: {
      username: local.userName ?? '-',
      sessionId: local.sessionId,
      sessionVersion: local.sessionVersion,
      netType: 'IN',
      ipVer: family,
      address: local.address,
    },
    // RFC 3264 §5: s= carries no meaning in offer/answer, and "-" is the recommended filler.
    name: '-',
    connection: { version: family, ip: local.address },
    timing: { start: 0, stop: 0 },
    media,
  });
}

function audioMedia(port: number, audio: LocalAudio): MediaDescription {
  const rtp: MediaDescription['rtp'] = [];
  const fmtp: MediaDescription['fmtp'] = [];
  for (const codec of audio.codecs) {
    // Static payload types need no rtpmap, but many endpoints log a warning without one.
    rtp.push(
      codec.name === 'opus'
        ? { payload: codec.payloadType, codec: 'opus', rate: 48000, encoding: 2 }
        : { payload: codec.payloadType, codec: codec.name, rate: codec.clockRate },
    );
    if (codec.name === 'opus') fmtp.push({ payload: codec.payloadType, config: OPUS_FMTP });
  }
  for (const event of audio.telephoneEvents) {
    rtp.push({ payload: event.payloadType, codec: 'telephone-event', rate: event.clockRate });
    fmtp.push({ payload: event.payloadType, config: TELEPHONE_EVENT_FMTP });
  }
  const payloads = [...audio.codecs.map((codec) => codec.payloadType), ...audio.telephoneEvents.map((event) => event.payloadType)].join(' ');
  return {
    type: 'audio',
    port,
    protocol: audio.protocol,
    payloads,
    rtp,
    fmtp,
    ptime: LOCAL_PTIME_MS,
    direction: audio.direction,
    ...(audio.rtcpMux ? { rtcpMux: 'rtcp-mux' } : {}),
  };
}

/** A stream turned down: same media type, protocol and a format of the offer, port 0 (RFC 3264 §6). */
function rejected(line: MediaLine): MediaDescription {
  return { type: line.type, port: 0, protocol: line.protocol, payloads: line.firstFormat, rtp: [], fmtp: [] };
}
