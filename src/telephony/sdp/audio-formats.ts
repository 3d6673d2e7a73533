/**
 * The formats of an audio m-line turned into the codecs we support (in the order listed) and
 * the telephone-event payload types, using the rtpmap lines `sdp-transform` found.
 */
import type { MediaDescription } from 'sdp-transform';
import { codecFor, type MediaCodec, type RtpMap, TELEPHONE_EVENT_RATES } from './media-codec.js';
import { SdpError } from './sdp-error.js';
import { excerpt } from './sdp-lines.js';

/** What an audio m-line offers that we can use. */
export interface AudioFormats {
  readonly codecs: MediaCodec[];
  readonly telephoneEvents: Map<number, number>;
}

/**
 * Reads the formats (payload types) of an audio m-line. Throws 400 for a format that is not
 * a payload type, and 488 when no supported codec is among them.
 */
export function audioFormats(formats: readonly string[], media: MediaDescription | undefined): AudioFormats {
  const rtpmaps = rtpmapsOf(media);
  const codecs: MediaCodec[] = [];
  const telephoneEvents = new Map<number, number>();
  const seen = new Set<number>();
  for (const format of formats) {
    const payloadType = /^\d{1,3}$/.test(format) ? Number(format) : NaN;
    if (!(payloadType <= 127)) throw new SdpError(400, `audio format ${excerpt(format)} is not an RTP payload type (0–127)`);
    if (seen.has(payloadType)) continue;
    seen.add(payloadType);
    const rtpmap = rtpmaps.get(payloadType);
    const codec = codecFor(payloadType, rtpmap);
    if (codec) codecs.push(codec);
    else if (rtpmap && rtpmap.name.toLowerCase() === 'telephone-event' && rtpmap.clockRate !== undefined) {
      // The first of several at one rate wins, like the codec order: the offerer listed it first.
      if (TELEPHONE_EVENT_RATES.includes(rtpmap.clockRate) && !telephoneEvents.has(rtpmap.clockRate)) telephoneEvents.set(rtpmap.clockRate, payloadType);
    }
  }
  if (codecs.length === 0) {
    const offered = [...seen].map((pt) => describe(pt, rtpmaps.get(pt))).join(', ');
    throw new SdpError(488, `no supported audio codec offered (offered: ${offered}); supported are PCMU/8000, PCMA/8000 and opus/48000/2`);
  }
  return { codecs, telephoneEvents };
}

function rtpmapsOf(media: MediaDescription | undefined): Map<number, RtpMap> {
  const rtpmaps = new Map<number, RtpMap>();
  for (const entry of media?.rtp ?? []) {
    // sdp-transform turns digit strings into numbers and leaves anything else a string (or empty).
    const payload = Number(entry.payload);
    if (!Number.isInteger(payload) || String(entry.payload) === '' || rtpmaps.has(payload)) continue;
    rtpmaps.set(payload, { name: String(entry.codec), clockRate: positiveInteger(entry.rate), channels: positiveInteger(entry.encoding) });
  }
  return rtpmaps;
}

function positiveInteger(value: unknown): number | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(number) && number > 0 ? number : undefined;
}

function describe(payloadType: number, rtpmap: RtpMap | undefined): string {
  if (!rtpmap) return String(payloadType);
  const rate = rtpmap.clockRate === undefined ? '' : `/${rtpmap.clockRate}`;
  const channels = rtpmap.channels === undefined ? '' : `/${rtpmap.channels}`;
  return `${payloadType} ${rtpmap.name}${rate}${channels}`;
}
