/**
 * Writes Ogg pages (RFC 3533). Only what a single logical mono stream needs: packets are laced
 * into pages, each page carries the granule position of the last packet that ends on it.
 */

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** The Ogg CRC-32 (polynomial 0x04C11DB7, no reflection, zero start). */
export function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc;
}

/** Header-type flags of a page. */
export const PAGE_FLAGS = { continued: 1, beginOfStream: 2, endOfStream: 4 } as const;

/** Largest number of lacing values in one page. */
const MAX_SEGMENTS = 255;

/** Builds Ogg pages for one logical stream. */
export class OggPageWriter {
  private sequence = 0;

  constructor(private readonly serial: number) {}

  /**
   * Writes one page holding whole packets. `granule` is the position after the last packet;
   * -1 when no packet ends on the page. Packets must fit in 255 lacing values together.
   */
  page(packets: readonly Uint8Array[], granule: bigint, flags = 0): Buffer {
    const lacing: number[] = [];
    for (const packet of packets) {
      let left = packet.length;
      while (left >= 255) {
        lacing.push(255);
        left -= 255;
      }
      lacing.push(left);
    }
    if (lacing.length > MAX_SEGMENTS) throw new RangeError(`packets need ${lacing.length} lacing values; a page holds ${MAX_SEGMENTS}`);
    const bodyLength = packets.reduce((sum, p) => sum + p.length, 0);
    const page = Buffer.alloc(27 + lacing.length + bodyLength);
    page.write('OggS', 0, 'ascii');
    page.writeUInt8(0, 4);
    page.writeUInt8(flags, 5);
    page.writeBigInt64LE(granule, 6);
    page.writeUInt32LE(this.serial >>> 0, 14);
    page.writeUInt32LE(this.sequence++, 18);
    page.writeUInt32LE(0, 22);
    page.writeUInt8(lacing.length, 26);
    Buffer.from(lacing).copy(page, 27);
    let offset = 27 + lacing.length;
    for (const packet of packets) {
      page.set(packet, offset);
      offset += packet.length;
    }
    page.writeUInt32LE(oggCrc(page), 22);
    return page;
  }
}
