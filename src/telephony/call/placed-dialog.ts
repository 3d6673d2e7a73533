/**
 * A call the gateway placed, as a call session sees its signalling: the answered
 * {@link OutboundDialog} behind the same face as the calls we answer, so one session runs a
 * dialplan route on either. The call is answered already (by the callee), so answering and
 * early media are nothing to do; refusing it is hanging it up. REFER goes to the callee only on
 * calls we answer: here it is refused, and a transfer step bridges instead.
 */
import { EventEmitter } from 'node:events';
import type { OutboundDialog } from '../sip/sip-outbound-dialog.js';
import type { SipPeer } from '../sip/sip-transport.js';
import type { CallDialogEvents, ReferOutcome, SessionBody, SessionDialog } from './call-dialog.js';

/** What a placed call's session knows of it besides the dialog. */
export interface PlacedCallParties {
  /** Our From as sent (the caller ID the callee saw). */
  readonly from: string;
  /** Who we called: the number, or the SIP URI. */
  readonly called: string;
}

/** The signalling of a call we placed, once answered. */
export class PlacedCallDialog extends EventEmitter<CallDialogEvents> implements SessionDialog {
  readonly offer: SessionBody | null = null;

  constructor(
    private readonly dialog: OutboundDialog,
    private readonly parties: PlacedCallParties,
  ) {
    super();
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

  get callId(): string {
    return this.dialog.callId;
  }

  /** For a call we placed, the caller is us: our From. */
  get callerUri(): string {
    return this.parties.from;
  }

  get calledUser(): string | null {
    return this.parties.called;
  }

  get source(): SipPeer {
    return this.dialog.peer;
  }

  get ended(): boolean {
    return this.dialog.ended;
  }

  /** Early media is the callee's to send; ours starts with the answer. */
  progress(): void {}

  /** The callee answered already: nothing is sent, and there is no ACK to wait for. */
  accept(): Promise<SessionBody | null> {
    return Promise.resolve(null);
  }

  /** A call that is up cannot be refused: it is hung up. */
  reject(status: number): void {
    void this.dialog.hangup(`refused (${status})`);
  }

  hangup(reason?: string): Promise<void> {
    return this.dialog.hangup(reason);
  }

  /** REFER is for the calls we answer (their caller's side places the new call); a placed call bridges. */
  refer(): Promise<ReferOutcome> {
    return Promise.resolve({ result: 'refused', status: null });
  }
}
