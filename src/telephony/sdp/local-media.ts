import { isIP } from 'node:net';
import type { CodecName } from './media-codec.js';

/** Our side of a session: where we receive audio, what we prefer, and our o= line. */
export interface LocalMedia {
  /** Our RTP address, IPv4 or IPv6; also written in o=. */
  readonly address: string;
  /** Our RTP port. */
  readonly port: number;
  /** Codecs we are willing to use, most preferred first; never empty. */
  readonly preferences: readonly CodecName[];
  /** o= session id: digits, fixed for the dialog. */
  readonly sessionId: string;
  /** o= version: goes up by one whenever our description changes (see `nextSessionVersion`). */
  readonly sessionVersion: number;
  /** o= user name; `-` when absent. */
  readonly userName?: string;
}

/**
 * Throws when our own settings could not produce a valid description. These are mistakes in
 * the calling code, not in the far end's SDP, so they are not `SdpError`s.
 */
export function assertLocalMedia(local: LocalMedia): void {
  if (isIP(local.address) === 0) throw new TypeError(`local media address is not an IP address: ${JSON.stringify(local.address)}`);
  if (!Number.isInteger(local.port) || local.port < 1 || local.port > 65535) throw new RangeError(`local RTP port out of range: ${local.port}`);
  if (local.preferences.length === 0) throw new RangeError('local media must prefer at least one codec');
  if (!/^\d{1,20}$/.test(local.sessionId)) throw new TypeError(`o= session id must be digits: ${JSON.stringify(local.sessionId)}`);
  if (!Number.isSafeInteger(local.sessionVersion) || local.sessionVersion < 0)
    throw new RangeError(`o= session version must be a non-negative integer: ${local.sessionVersion}`);
  if (local.userName !== undefined && !/^[\x21-\x7e]+$/.test(local.userName))
    throw new TypeError(`o= user name must be visible ASCII without spaces: ${JSON.stringify(local.userName)}`);
}
