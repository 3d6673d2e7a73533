/**
 * The wait for the ACK of a 2xx we sent to an INVITE (RFC 3261 section 13.3.1.4): the 2xx is
 * sent again after T1, doubling up to T2, until the ACK comes or 64 × T1 have passed. This is
 * the dialog's job, not the transaction's (RFC 6026).
 */
import type { SipRequest } from './sip-message.js';
import type { SipTimers } from './sip-transactions.js';
import { TimerSet } from './timer-set.js';

/** One 2xx awaiting its ACK. */
export class AckWait {
  /** Resolves with the ACK; rejects when none came in time or the wait was stopped. */
  readonly acked: Promise<SipRequest>;
  private readonly timers = new TimerSet();
  private settle!: { resolve: (ack: SipRequest) => void; reject: (error: Error) => void };
  private done = false;

  /**
   * @param seq the CSeq number of the INVITE, which its ACK repeats
   * @param resend sends the 2xx once more; null where it is not resent (the dialogs resend over
   *   UDP only, where a datagram may be lost)
   * @param onTimeout runs when 64 × T1 passed without the ACK (after `acked` rejects)
   */
  constructor(
    readonly seq: number,
    sipTimers: SipTimers,
    resend: (() => void) | null,
    onTimeout: () => void,
  ) {
    this.acked = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    const again = (interval: number, send: () => void): void => {
      this.timers.after(interval, () => {
        send();
        again(Math.min(interval * 2, sipTimers.t2Ms), send);
      });
    };
    if (resend) again(sipTimers.t1Ms, resend);
    this.timers.after(64 * sipTimers.t1Ms, () => {
      this.stop(new Error('no ACK for the 2xx'));
      onTimeout();
    });
  }

  /** Whether `ack` is the one awaited (its CSeq number). */
  matches(ack: SipRequest, seq: number): boolean {
    return !this.done && ack.method === 'ACK' && seq === this.seq;
  }

  /** The ACK came. */
  arrived(ack: SipRequest): void {
    if (this.done) return;
    this.clear();
    this.settle.resolve(ack);
  }

  /** Stops waiting; `acked` rejects with `error`. */
  stop(error: Error): void {
    if (this.done) return;
    this.clear();
    this.settle.reject(error);
  }

  private clear(): void {
    this.done = true;
    this.timers.clear();
  }
}
