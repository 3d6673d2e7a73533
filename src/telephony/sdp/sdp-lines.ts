/**
 * The first look at a session description: size bounds, line splitting, and the split into the
 * session section and one section per m-line. `sdp-transform` accepts anything (it skips lines
 * it does not understand), so whether the text is SDP at all is decided here.
 */
import { SdpError } from './sdp-error.js';

/** Bounds on a description we read; a telephone call needs a fraction of each. */
export const SDP_LIMITS = { maxBytes: 16 * 1024, maxLines: 512, maxMediaLines: 64 } as const;

/** A description's non-empty lines, trimmed, split into sections. */
export interface SdpSections {
  /** All lines, in order. */
  readonly lines: readonly string[];
  /** Lines before the first m-line. */
  readonly session: readonly string[];
  /** Per m-line: the m-line itself first, then the lines up to the next m-line. */
  readonly media: ReadonlyArray<readonly string[]>;
}

/** Reads the lines of a description, or throws `SdpError` 400 when it is not one or is too big. */
export function readSdpSections(text: string): SdpSections {
  // A string longer than the byte limit in UTF-16 units is longer in UTF-8 bytes too: no need to encode it.
  const bytes = text.length > SDP_LIMITS.maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > SDP_LIMITS.maxBytes) throw new SdpError(400, `the description has ${bytes} bytes, more than the ${SDP_LIMITS.maxBytes} accepted`);
  const lines: string[] = [];
  const session: string[] = [];
  const media: string[][] = [];
  let lineNumber = 0;
  // Line ends may be CRLF (RFC 4566), LF alone, or CR alone: all are seen from real endpoints.
  for (const raw of text.split(/\r\n|\r|\n/)) {
    lineNumber += 1;
    const line = raw.trim();
    if (line === '') continue;
    if (lines.length === 0 && line !== 'v=0') throw new SdpError(400, `not a session description: the first line must be v=0, not ${excerpt(line)}`);
    if (!/^[a-z]=/.test(line)) throw new SdpError(400, `line ${lineNumber} is not <type>=<value>: ${excerpt(line)}`);
    if (lines.length === SDP_LIMITS.maxLines) throw new SdpError(400, `the description has more than ${SDP_LIMITS.maxLines} lines`);
    lines.push(line);
    if (line.startsWith('m=')) {
      if (media.length === SDP_LIMITS.maxMediaLines) throw new SdpError(400, `the description has more than ${SDP_LIMITS.maxMediaLines} m-lines`);
      media.push([line]);
    } else {
      (media.at(-1) ?? session).push(line);
    }
  }
  if (lines.length === 0) throw new SdpError(400, 'not a session description: the body is empty');
  return { lines, session, media };
}

/** The last line of a section with the given type letter, or `undefined`. */
export function lineOfType(section: readonly string[], type: string): string | undefined {
  return section.findLast((line) => line.startsWith(`${type}=`));
}

/** A short, escaped quotation of untrusted text for an error detail. */
export function excerpt(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}
