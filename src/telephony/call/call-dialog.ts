/**
 * The signalling side of a call as the call session sees it, whoever does the SIP: the
 * embedded stack (`SipDialog`) or a drachtio-server (`DrachtioDialog`). Answering, refusing,
 * early media and hanging up go out; the caller's BYE, CANCEL, re-offers and INFO come in as
 * events.
 */
import type { EventEmitter } from 'node:events';
import type { SipPeer } from '../sip/sip-transport.js';

/** An offer or answer body with its content type. */
export interface SessionBody {
  readonly contentType: string;
  readonly body: Buffer;
}

/** Why a call's signalling ended. */
export type DialogEndReason = 'cancel' | 'bye' | 'hangup' | 'rejected' | 'ack-timeout' | 'shutdown';

/** What a dialog reports. */
export interface CallDialogEvents {
  /** The caller gave up before the answer (CANCEL); the INVITE got 487. */
  cancel: [];
  /** The caller hung up (BYE). */
  bye: [];
  /** A re-INVITE or UPDATE; call `reply` with an answer body, or with a status to refuse. */
  reoffer: [offer: SessionBody | null, reply: (answer: SessionBody | number) => void];
  /** An INFO request (DTMF relay and others); it has been answered 200. */
  info: [request: SessionBody];
  /** The dialog is over, for whatever reason. */
  ended: [reason: DialogEndReason];
}

/** One incoming call's signalling. */
export interface CallDialog extends EventEmitter<CallDialogEvents> {
  readonly callId: string;
  /** The caller's URI (From). */
  readonly callerUri: string;
  /** The called number (the Request-URI's user part), or null. */
  readonly calledUser: string | null;
  /** Where the INVITE came from: the caller, or the proxy in front of it. */
  readonly source: SipPeer;
  /** The caller's offer in the INVITE, if it made one. */
  readonly offer: SessionBody | null;
  readonly ended: boolean;
  /** 183 Session Progress with an answer (early media). */
  progress(answer: SessionBody): void;
  /**
   * 200 OK with our answer (or our offer, when the INVITE had none). Resolves with the ACK's
   * body (the caller's answer in the second case; null without one).
   */
  accept(body: SessionBody): Promise<SessionBody | null>;
  /** Refuses the call with a final status. */
  reject(status: number, headers?: Iterable<readonly [string, string]>): void;
  /** Ends the call from our side. */
  hangup(): Promise<void>;
}
