/**
 * Reads a libpcap capture file (what `tcpdump -w` writes) far enough for the call benchmark:
 * each IPv4 UDP datagram with its kernel timestamp and destination port. Link types: Ethernet
 * (Linux `lo`), Linux cooked (`any`) and BSD loopback.
 */

/** One UDP datagram of a capture. */
export interface CapturedDatagram {
  /** Kernel timestamp, in ms since the epoch (CLOCK_REALTIME). */
  readonly atMs: number;
  readonly sourcePort: number;
  readonly destinationPort: number;
  /** The UDP payload as captured (cut at the snapshot length). */
  readonly payload: Buffer;
}

const LINK_HEADER: Record<number, { bytes: number; etherTypeAt: number | null }> = {
  0: { bytes: 4, etherTypeAt: null }, // BSD loopback: a 4-byte address family
  1: { bytes: 14, etherTypeAt: 12 }, // Ethernet
  113: { bytes: 16, etherTypeAt: 14 }, // Linux cooked capture
};

/** Every IPv4 UDP datagram in `file`, in capture order. @throws Error for a file that is not a pcap capture of a supported link type */
export function* capturedDatagrams(file: Buffer): Generator<CapturedDatagram> {
  if (file.length < 24) throw new Error('not a pcap capture: shorter than its 24-byte header');
  const magic = file.readUInt32LE(0);
  const littleEndian = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  const bigMagic = file.readUInt32BE(0);
  if (!littleEndian && bigMagic !== 0xa1b2c3d4 && bigMagic !== 0xa1b23c4d) throw new Error(`not a pcap capture (magic 0x${magic.toString(16)})`);
  const u32 = (at: number): number => (littleEndian ? file.readUInt32LE(at) : file.readUInt32BE(at));
  const nanoseconds = (littleEndian ? magic : bigMagic) === 0xa1b23c4d;
  const linkType = u32(20) & 0xffff;
  const link = LINK_HEADER[linkType];
  if (!link) throw new Error(`pcap link type ${linkType} is not read here (Ethernet, Linux cooked and BSD loopback are)`);
  for (let at = 24; at + 16 <= file.length;) {
    const seconds = u32(at);
    const fraction = u32(at + 4);
    const captured = u32(at + 8);
    const data = file.subarray(at + 16, Math.min(file.length, at + 16 + captured));
    at += 16 + captured;
    if (link.etherTypeAt !== null && (data.length < link.bytes || data.readUInt16BE(link.etherTypeAt) !== 0x0800)) continue;
    const ip = data.subarray(link.bytes);
    if (ip.length < 20 || ip[0]! >> 4 !== 4 || ip[9] !== 17) continue;
    const udp = ip.subarray((ip[0]! & 0x0f) * 4);
    if (udp.length < 8) continue;
    yield {
      atMs: seconds * 1000 + (nanoseconds ? fraction / 1e6 : fraction / 1e3),
      sourcePort: udp.readUInt16BE(0),
      destinationPort: udp.readUInt16BE(2),
      payload: udp.subarray(8),
    };
  }
}
