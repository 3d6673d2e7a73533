/**
 * A call the gateway placed, as a call session sees its signalling: the answered
 * {@link OutboundDialog} behind the same face as the calls we answer, so one session runs a
 * dialplan route on either. A session may start before the answer, on the callee's early media:
 * until {@link PlacedCallDialog.answeredBy} hands over the dialog, hanging up cancels the
 * INVITE, and a call that is never answered ends the session ({@link PlacedCallDialog.unanswered}).
 * Answering and early media are nothing for us to do (the callee answers, and sends the early
 * media); refusing is hanging up. REFER goes to the callee only on calls we answer: here it is
 * refused, and a transfer step bridges instead.
 */
import { EventEmitter } from 'node:events';
import type { OutboundDialog } from '../sip/sip-outbound-dialog.js';
import type { SipPeer } from '../sip/sip-transport.js';
import type { CallDialogEvents, ReferOutcome, SessionBody, SessionDialog } from './call-dialog.js';

/** What a placed call's session knows of it besides the dialog. */
export interface PlacedCallParties {
  /** The INVITE's Call-ID. */
  readonly callId: string;
  /** Our From as sent (the caller ID the callee saw). */
  readonly from: string;
  /** Who we called: the number, or the SIP URI. */
  readonly called: string;
  /** Where the INVITE went first (the trunk's proxy, or the callee), until the answer names the peer. */
  readonly firstHop: SipPeer;
  /** Gives up the call while it is not answered (CANCEL). */
  readonly cancel: () => void;
}

/** The signalling of a call we placed. */
export class PlacedCallDialog extends EventEmitter<CallDialogEvents> implements SessionDialog {
  readonly offer: SessionBody | null = null;
  private dialog: OutboundDialog | null = null;
  private notAnswered = false;

  constructor(private readonly parties: PlacedCallParties) {
    super();
  }

  /** The callee answered: from now on its dialog carries the call. */
  answeredBy(dialog: OutboundDialog): void {
    this.dialog = dialog;
    dialog.on('ended', (reason) => {
      if (reason === 'bye') this.emit('bye');
      this.emit('ended', reason);
    });
    dialog.on('reoffer', (offer, reply) => {
      // Before its session listens (a moment after the answer), the callee is asked to try again.
      if (this.listenerCount('reoffer') === 0) reply(491);
      else this.emit('reoffer', offer, reply);
    });
    dialog.on('info', (info) => this.emit('info', info));
  }

  /** The call was not answered (busy, no answer, cancelled): a session on its early media ends. */
  unanswered(): void {
    if (this.notAnswered || this.dialog) return;
    this.notAnswered = true;
    this.emit('ended', 'rejected');
  }

  get callId(): string {
    return this.parties.callId;
  }

  /** For a call we placed, the caller is us: our From. */
  get callerUri(): string {
    return this.parties.from;
  }

  get calledUser(): string | null {
    return this.parties.called;
  }

  get source(): SipPeer {
    return this.dialog?.peer ?? this.parties.firstHop;
  }

  get ended(): boolean {
    return this.notAnswered || (this.dialog?.ended ?? false);
  }

  /** Early media is the callee's to send; ours starts with the answer. */
  progress(): void {}

  /** The callee answers, not we: nothing is sent, and there is no ACK to wait for. */
  accept(): Promise<SessionBody | null> {
    return Promise.resolve(null);
  }

  /** A call that is up cannot be refused: it is hung up. */
  reject(status: number): void {
    void this.hangup(`refused (${status})`);
  }

  /** BYE once answered; before, the INVITE is cancelled (and {@link unanswered} follows). */
  hangup(reason?: string): Promise<void> {
    if (this.dialog) return this.dialog.hangup(reason);
    this.parties.cancel();
    return Promise.resolve();
  }

  /** REFER is for the calls we answer (their caller's side places the new call); a placed call bridges. */
  refer(): Promise<ReferOutcome> {
    return Promise.resolve({ result: 'refused', status: null });
  }
}
