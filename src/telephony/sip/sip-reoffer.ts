/**
 * The answer to a re-INVITE or UPDATE inside a call (RFC 3261 section 14, RFC 3311), whichever
 * dialog took it: a 100 at once for a re-INVITE, whose answer may take the application a
 * moment, then one reply — a status to refuse, or a session description in a 200 that, for a
 * re-INVITE, is retransmitted until its ACK.
 */
import type { SessionBody } from '../call/call-dialog.js';
import type { SipRequest, SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import { buildResponse, type ServerTransaction } from './sip-transactions.js';

/** What answering a re-offer needs from the dialog. */
export interface ReofferDialog {
  /** Whether the dialog is over: a late reply is then dropped. */
  isOver(): boolean;
  /** The 200 with this body and the dialog's Contact. */
  ok(request: SipRequest, body: SessionBody): SipResponse;
  /** Resends a re-INVITE's 2xx until its ACK (CSeq number `seq`) comes. */
  awaitAck(response: SipResponse, seq: number): void;
  /** The exchange is answered: another re-offer may come. */
  settled(): void;
}

/** Starts answering `request`; returns the reply function, which acts once. */
export function reofferReply(request: SipRequest, transaction: ServerTransaction, dialog: ReofferDialog): (answer: SessionBody | number) => void {
  // Stops the other side's retransmissions while the application decides.
  if (request.method === 'INVITE') transaction.respond(buildResponse(request, 100, transaction.source));
  let replied = false;
  return (answer) => {
    if (replied || dialog.isOver()) return;
    replied = true;
    dialog.settled();
    if (typeof answer === 'number') {
      transaction.respond(buildResponse(request, answer, transaction.source));
      return;
    }
    const response = dialog.ok(request, answer);
    transaction.respond(response);
    // A re-INVITE's 2xx waits for its ACK like the first one; UPDATE has none.
    if (request.method === 'INVITE') dialog.awaitAck(response, cseqOf(request).seq);
  };
}
