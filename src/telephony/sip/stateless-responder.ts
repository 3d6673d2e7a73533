/**
 * Answers sent without a server transaction (RFC 3261 section 8.2.7): once, never
 * retransmitted, nothing kept. A retransmitted request is simply answered again. That is what
 * a request gets when its answer is final at once and changes nothing (OPTIONS, 405, 481), a
 * refusal of a source outside the allow-list, or a 503 when the transaction table is full: a
 * flood of them leaves no state behind, and none of them is resent to a possibly spoofed source.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { serializeMessage, type SipRequest } from './sip-message.js';
import { buildResponse, responsePeer, serverTransactionKey, type TransactionTransport } from './sip-transactions.js';
import type { SipPeer } from './sip-transport.js';

/** Extra parts of a stateless response: its headers and reason phrase. */
export interface StatelessAnswer {
  readonly headers?: Iterable<readonly [string, string]>;
  readonly reason?: string;
}

/** Sends stateless responses over a transport. */
export class StatelessResponder {
  /**
   * Keys the To tags: a tag must be the same for every retransmission of one request (section
   * 8.2.7) and yet unguessable and unique like a random one (section 19.3).
   */
  private readonly secret = randomBytes(32);

  constructor(private readonly transport: TransactionTransport) {}

  /** The To tag this process gives every copy of `request`. */
  tagFor(request: SipRequest): string {
    const identity = serverTransactionKey(request) ?? `${request.headers.get('Call-ID')}|${request.headers.get('CSeq')}`;
    return createHmac('sha256', this.secret).update(identity).digest('hex').slice(0, 16);
  }

  /** Answers `request` once, where its Via says responses go. */
  respond(request: SipRequest, status: number, source: SipPeer, answer: StatelessAnswer = {}): void {
    const response = buildResponse(request, status, source, { toTag: this.tagFor(request), ...answer });
    this.transport.send(serializeMessage(response), responsePeer(request, source));
  }
}
