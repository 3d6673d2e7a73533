/**
 * The audio codecs we take part in calls with, and how they are recognised in an offer.
 * Encoding names are compared without regard to case (RFC 4855 §3).
 */

/** Codec names this gateway encodes and decodes. */
export type CodecName = 'PCMU' | 'PCMA' | 'opus';

/** One codec of a media description, with the payload type it travels under in this session. */
export interface MediaCodec {
  readonly name: CodecName;
  readonly payloadType: number;
  /** RTP clock rate in Hz (8000 for G.711; 48000 for Opus whatever its real bandwidth). */
  readonly clockRate: number;
  /** Channels as written in the rtpmap: 1 for G.711, always 2 for Opus (RFC 7587 §7). */
  readonly channels: number;
}

/** Clock rates at which we understand telephone-event (RFC 4733): one per codec family. */
export const TELEPHONE_EVENT_RATES: readonly number[] = [8000, 48000];

/** The payload types we use in our own offers. */
export const OFFER_PAYLOAD_TYPES = { PCMU: 0, PCMA: 8, opus: 111, telephoneEvent8000: 101, telephoneEvent48000: 102 } as const;

/** The opus fmtp we send: in-band FEC helps over lossy mobile and Wi-Fi legs at no cost to us. */
export const OPUS_FMTP = 'useinbandfec=1';

/** The DTMF events we receive (RFC 4733 §3.2: the 16 keys and flash). */
export const TELEPHONE_EVENT_FMTP = '0-16';

const CANONICAL: Record<CodecName, { clockRate: number; channels: number }> = {
  PCMU: { clockRate: 8000, channels: 1 },
  PCMA: { clockRate: 8000, channels: 1 },
  opus: { clockRate: 48000, channels: 2 },
};

/** Static payload types (RFC 3551 §6) that we support, usable without an rtpmap. */
const STATIC: ReadonlyMap<number, CodecName> = new Map([
  [0, 'PCMU'],
  [8, 'PCMA'],
]);

/** A payload's rtpmap as written: encoding name, clock rate and (optional) channel count. */
export interface RtpMap {
  readonly name: string;
  readonly clockRate: number | undefined;
  readonly channels: number | undefined;
}

/**
 * The supported codec a payload type stands for, or `null`. An explicit rtpmap wins over the
 * static table; the offerer said what it means. Opus without the channel count is accepted
 * although RFC 7587 requires `/2`, because some endpoints leave it out.
 */
export function codecFor(payloadType: number, rtpmap: RtpMap | undefined): MediaCodec | null {
  if (!rtpmap) {
    const name = STATIC.get(payloadType);
    return name ? canonical(name, payloadType) : null;
  }
  const name = supportedName(rtpmap.name);
  if (!name) return null;
  const expected = CANONICAL[name];
  if (rtpmap.clockRate !== expected.clockRate) return null;
  const channels = rtpmap.channels ?? (name === 'opus' ? 2 : 1);
  return channels === expected.channels ? canonical(name, payloadType) : null;
}

/** The codec with its canonical clock rate and channels under `payloadType`. */
export function canonical(name: CodecName, payloadType: number): MediaCodec {
  return { name, payloadType, ...CANONICAL[name] };
}

/** True when two codec descriptions denote the same codec (payload types may differ). */
export function sameCodec(a: MediaCodec, b: MediaCodec): boolean {
  return a.name === b.name && a.clockRate === b.clockRate && a.channels === b.channels;
}

function supportedName(encoding: string): CodecName | null {
  switch (encoding.toLowerCase()) {
    case 'pcmu':
      return 'PCMU';
    case 'pcma':
      return 'PCMA';
    case 'opus':
      return 'opus';
    default:
      return null;
  }
}
