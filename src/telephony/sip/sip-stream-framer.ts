/**
 * Cuts a byte stream (SIP over TCP or TLS) into messages at their Content-Length (RFC 3261
 * section 18.3, where Content-Length is mandatory). Bounded: a header block or body over the
 * message limit ends the connection instead of growing the buffer.
 */
import { findHeaderEnd, MAX_MESSAGE_BYTES, skipKeepAlive } from './sip-parser.js';

/** What a chunk of stream produced: whole messages, or a reason to drop the connection. */
export type FramedMessages = { readonly messages: Buffer[]; readonly fatal: string | null };

const CONTENT_LENGTH = /^(?:content-length|l)[ \t]*:[ \t]*(\S*)[ \t]*$/im;

/** One connection's reassembly buffer. */
export class SipStreamFramer {
  private buffered: Buffer = Buffer.alloc(0);

  /** Bytes of a message begun but not complete yet. */
  get pendingBytes(): number {
    return this.buffered.length;
  }

  /** Adds received bytes; returns every message they complete. */
  push(chunk: Buffer): FramedMessages {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const messages: Buffer[] = [];
    for (;;) {
      const start = skipKeepAlive(this.buffered);
      if (start > 0) this.buffered = this.buffered.subarray(start);
      if (this.buffered.length === 0) return { messages, fatal: null };
      const end = findHeaderEnd(this.buffered);
      if (!end) {
        if (this.buffered.length > MAX_MESSAGE_BYTES) return this.fail(messages, `a header block over ${MAX_MESSAGE_BYTES} bytes`);
        return { messages, fatal: null };
      }
      const head = this.buffered.subarray(0, end.bodyStart).toString('latin1');
      const match = CONTENT_LENGTH.exec(head);
      if (!match) return this.fail(messages, 'a message without Content-Length on a stream');
      if (!/^\d{1,7}$/.test(match[1]!)) return this.fail(messages, `a malformed Content-Length ${JSON.stringify(match[1]!.slice(0, 20))}`);
      const total = end.bodyStart + Number(match[1]);
      if (total > MAX_MESSAGE_BYTES) return this.fail(messages, `a message of ${total} bytes, over the ${MAX_MESSAGE_BYTES}-byte limit`);
      if (this.buffered.length < total) return { messages, fatal: null };
      messages.push(Buffer.from(this.buffered.subarray(0, total)));
      this.buffered = this.buffered.subarray(total);
    }
  }

  private fail(messages: Buffer[], reason: string): FramedMessages {
    this.buffered = Buffer.alloc(0);
    return { messages, fatal: reason };
  }
}
