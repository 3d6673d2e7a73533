/**
 * The signalling side of a call as the call session sees it, whoever does the SIP: the
 * embedded stack (`SipDialog`) or a drachtio-server (`DrachtioDialog`). Answering, refusing,
 * early media, blind transfer (REFER) and hanging up go out; the caller's BYE, CANCEL,
 * re-offers and INFO come in as events.
 */
import type { EventEmitter } from 'node:events';
import type { SipRequest } from '../sip/sip-message.js';
import type { SipPeer } from '../sip/sip-transport.js';

/** An offer or answer body with its content type. */
export interface SessionBody {
  readonly contentType: string;
  readonly body: Buffer;
}

/** Why a call's signalling ended. */
export type DialogEndReason = 'cancel' | 'bye' | 'hangup' | 'rejected' | 'ack-timeout' | 'shutdown';

/**
 * How a blind transfer (REFER) ended: `transferred` when the caller's side reported the
 * target's 2xx (NOTIFY with a message/sipfrag body); `refused` when the REFER itself was
 * answered 300 or above (405, 501, 603…) or not at all (null); `failed` when the REFER was
 * accepted but the target's call ended 300 or above, or no final NOTIFY came in time (null).
 */
export type ReferOutcome =
  | { readonly result: 'transferred'; readonly status: number }
  | { readonly result: 'refused'; readonly status: number | null }
  | { readonly result: 'failed'; readonly status: number | null };

/** What a REFER carries besides its target. */
export interface ReferOptions {
  /** Extra headers (X-…, User-to-User); header names the stack writes are refused. */
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  /** The Referred-By URI; our own URI in the dialog unless given. */
  readonly referredBy?: string;
  /** How long to wait for the final NOTIFY once the REFER is accepted (default 30 s). */
  readonly timeoutMs?: number;
}

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

/** A call's signalling as a call session uses it: one we answer ({@link CallDialog}), or one we placed (placed-dialog.ts). */
export interface SessionDialog extends EventEmitter<CallDialogEvents> {
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
  /**
   * Ends the call from our side. `reason` goes into the BYE as an RFC 3326 Reason header
   * (`Q.850;cause=16;text="…"`), for the other side's logs.
   */
  hangup(reason?: string): Promise<void>;
  /**
   * Asks the caller's side to call `target` (REFER, RFC 3515) and follows its NOTIFY progress.
   * The call stays up meanwhile; hang it up once the outcome is `transferred`. Resolves with
   * `refused` (null) on a call that is not answered or already over; an abort of `signal`
   * stops the wait with what is known by then (`refused` or `failed`, null).
   * @throws RangeError when `target` is not a SIP URI or a header is refused
   */
  refer(target: string, options?: ReferOptions, signal?: AbortSignal): Promise<ReferOutcome>;
}

/** One incoming call's signalling. */
export interface CallDialog extends SessionDialog {
  /** The INVITE as our parser read it (its To names the number dialled when a trunk calls our registered contact). */
  readonly invite: SipRequest;
}
