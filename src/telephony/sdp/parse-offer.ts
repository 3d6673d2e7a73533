/**
 * Reading the far end's session description (RFC 4566) for an audio call (RFC 3264): an offer
 * in an INVITE or re-INVITE, or the answer to one of our offers.
 */
import { isIP } from 'node:net';
import { parse, type MediaDescription, type SessionDescription } from 'sdp-transform';
import { audioFormats } from './audio-formats.js';
import { connectionAddress } from './connection-address.js';
import { DIRECTIONS, type Direction, withoutReceiving } from './direction.js';
import type { AudioProtocol, MediaLine, RemoteDescription } from './remote-description.js';
import { SdpError } from './sdp-error.js';
import { excerpt, lineOfType, readSdpSections, type SdpSections } from './sdp-lines.js';

/** Packetisation time when a=ptime is absent (RFC 3551 §4.5: 20 ms for G.711; usual for Opus). */
export const DEFAULT_PTIME_MS = 20;

/** An m-line with everything the stream choice needs. */
interface MediaLineFields extends MediaLine {
  readonly portToken: string;
  readonly formats: readonly string[];
}

/**
 * Reads a session description and picks its audio stream: the first audio m-line with a
 * non-zero port that we can use. Other m-lines are only listed, for the answer to reject.
 *
 * RTP/AVPF is accepted besides RTP/AVP: it is the same media with optional RTCP feedback
 * (RFC 4585), and a stream that never sends feedback is a valid AVPF stream, so the answer
 * echoes AVPF and simply ignores a=rtcp-fb. Encrypted or non-RTP protocols are refused.
 *
 * @throws SdpError 400 when the text is not SDP, too large (over 16 KiB, 512 lines or 64
 *   m-lines), or malformed where it matters (o=, m=, c=, audio port or payload types); 488
 *   when it is SDP without an audio stream we can take part in (no or disabled audio, a
 *   protocol other than RTP/AVP(F), an unusable address, no supported codec).
 */
export function parseOffer(text: string): RemoteDescription {
  const sections = readSdpSections(text);
  const origin = readOrigin(sections.session);
  const mediaLines = sections.media.map((section, index) => readMediaLine(section[0] ?? '', index));
  const audio = mediaLines.filter((line) => line.type === 'audio');
  if (audio.length === 0) {
    const types = mediaLines.length === 0 ? 'none' : mediaLines.map((line) => line.type).join(', ');
    throw new SdpError(488, `no audio m-line (media offered: ${types})`);
  }
  const enabled = audio.filter((line) => line.port !== 0);
  if (enabled.length === 0) throw new SdpError(488, 'the audio stream is disabled (port 0)');
  const parsed = parse(sections.lines.join('\r\n') + '\r\n');
  let firstError: SdpError | undefined;
  for (const line of enabled) {
    const index = mediaLines.indexOf(line);
    try {
      const stream = readAudio(line, sections, index, parsed);
      return {
        ...stream,
        audioIndex: index,
        mediaCount: mediaLines.length,
        mediaLines: mediaLines.map(({ type, port, protocol, firstFormat }) => ({ type, port, protocol, firstFormat })),
        origin,
      };
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      // A later audio stream may still be usable; if none is, the first one's reason is the one to give.
      firstError ??= error;
    }
  }
  throw firstError;
}

type AudioStream = Omit<RemoteDescription, 'audioIndex' | 'mediaCount' | 'mediaLines' | 'origin'>;

function readAudio(line: MediaLineFields, sections: SdpSections, index: number, parsed: SessionDescription): AudioStream {
  if (!/^\d+$/.test(line.portToken)) throw new SdpError(488, `audio port ${excerpt(line.portToken)}: port counts (layered streams) are not supported`);
  if (line.port > 65535) throw new SdpError(400, `audio port ${line.port} is out of range (1–65535)`);
  const protocol = audioProtocol(line.protocol);
  const media: MediaDescription | undefined = parsed.media[index];
  const connection = connectionAddress(sections.media[index] ?? [], sections.session);
  const { codecs, telephoneEvents } = audioFormats(line.formats, media);
  const declared = directionOf(media) ?? directionOf(parsed) ?? 'sendrecv';
  return {
    address: connection.address,
    addressFamily: connection.family,
    port: line.port,
    rtcp: rtcpOf(media, connection.address, line.port),
    rtcpMux: media?.rtcpMux !== undefined,
    protocol,
    codecs,
    telephoneEvents,
    ptime: ptimeOf(media) ?? ptimeOf(parsed) ?? DEFAULT_PTIME_MS,
    direction: connection.zero ? withoutReceiving(declared) : declared,
    holdByZeroAddress: connection.zero,
  };
}

function readOrigin(session: readonly string[]): RemoteDescription['origin'] {
  const line = lineOfType(session, 'o');
  if (!line) throw new SdpError(400, 'no origin line (o=) before the first m-line');
  const fields = line.slice(2).split(/\s+/);
  const [userName, sessionId, sessionVersion] = fields;
  if (fields.length !== 6 || userName === undefined || !/^\d{1,20}$/.test(sessionId ?? '') || !/^\d{1,20}$/.test(sessionVersion ?? '')) {
    throw new SdpError(
      400,
      `malformed origin line ${excerpt(line)}: expected o=<user> <session id> <version> IN IP4|IP6 <address> with numeric id and version`,
    );
  }
  return { userName, sessionId: sessionId as string, sessionVersion: sessionVersion as string };
}

function readMediaLine(line: string, index: number): MediaLineFields {
  const fields = line.slice(2).split(/\s+/);
  const [type, portToken, protocol, ...formats] = fields;
  const port = /^\d{1,10}(\/\d{1,10})?$/.test(portToken ?? '') ? Number.parseInt(portToken as string, 10) : NaN;
  if (!type || !protocol || formats.length === 0 || Number.isNaN(port)) {
    throw new SdpError(400, `malformed m-line ${index + 1} ${excerpt(line)}: expected m=<media> <port> <protocol> <format> …`);
  }
  return { type, port, protocol, firstFormat: formats[0] as string, portToken: portToken as string, formats };
}

function audioProtocol(protocol: string): AudioProtocol {
  const upper = protocol.toUpperCase();
  if (upper === 'RTP/AVP' || upper === 'RTP/AVPF') return upper;
  throw new SdpError(488, `audio protocol ${excerpt(protocol)} is not supported: only plain RTP (RTP/AVP or RTP/AVPF) is, without SRTP, DTLS or TCP`);
}

function directionOf(level: { direction?: string } | undefined): Direction | undefined {
  const value = level?.direction;
  return DIRECTIONS.find((direction) => direction === value);
}

/** An a=ptime that is not a sensible number of milliseconds is ignored rather than refused. */
function ptimeOf(level: object | undefined): number | undefined {
  // sdp-transform puts a session-level a=ptime on the session object, which its types do not foresee.
  const ptime = level && 'ptime' in level ? Number(level.ptime) : NaN;
  return Number.isFinite(ptime) && ptime >= 1 && ptime <= 1000 ? ptime : undefined;
}

function rtcpOf(media: MediaDescription | undefined, address: string, rtpPort: number): RemoteDescription['rtcp'] {
  const port = Number(media?.rtcp?.port);
  const rtcpAddress = String(media?.rtcp?.address ?? '');
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { address, port: rtpPort === 65535 ? rtpPort : rtpPort + 1 };
  return { address: isIP(rtcpAddress) === 0 ? address : rtcpAddress, port };
}
