/**
 * A blind transfer's progress (REFER, RFC 3515), whoever carries the SIP: the REFER's header
 * values, the reading of the NOTIFYs that report on the transferred call (an `Event: refer`
 * with a message/sipfrag body such as `SIP/2.0 180 Ringing`, and a Subscription-State), and
 * the outcome that follows from the REFER's answer, those NOTIFYs and the time waited.
 */
import type { ReferOutcome } from '../call/call-dialog.js';
import { parseNameAddress, parseParams, parseSipUri } from './sip-headers.js';

/** How long the final NOTIFY is awaited after the REFER was accepted, unless told. */
export const DEFAULT_REFER_TIMEOUT_MS = 30_000;

/**
 * The Refer-To value for a target: the SIP URI in angle brackets (RFC 3515 section 2.1 wants
 * them whenever the URI has parameters or headers; they never hurt).
 * @throws RangeError when the target is not a SIP or SIPS URI
 */
export function referToValue(target: string): string {
  const trimmed = target.trim();
  const uri = trimmed.startsWith('<') && trimmed.endsWith('>') ? trimmed.slice(1, -1).trim() : trimmed;
  if (/[\s<>"]/.test(uri) || !parseSipUri(uri)) throw new RangeError(`the transfer target ${JSON.stringify(target)} is not a SIP URI`);
  return `<${uri}>`;
}

/**
 * The Referred-By value (RFC 3892): a name-addr as given, or a bare URI put in angle brackets.
 * @throws RangeError when it cannot be read as one, or has a control character
 */
export function referredByValue(uri: string): string {
  const trimmed = uri.trim();
  const parsed = /[\u0000-\u001f\u007f]/.test(trimmed) ? null : parseNameAddress(trimmed);
  if (!parsed || !/^(sips?|tel):/i.test(parsed.uri)) throw new RangeError(`Referred-By ${JSON.stringify(uri)} is not a SIP URI`);
  return trimmed.includes('<') ? trimmed : `<${trimmed}>`;
}

/** What one NOTIFY of a refer subscription says. */
export interface ReferNotify {
  /** The Event header's `id` (the REFER's CSeq number), when it has one. */
  readonly id: string | null;
  /** The status of the sipfrag body's status line, when it has one. */
  readonly status: number | null;
  /** Whether the subscription ended with it (Subscription-State: terminated). */
  readonly terminated: boolean;
}

/**
 * Reads a NOTIFY's Event and Subscription-State headers and its body; null when it belongs to
 * another event package. A NOTIFY without an Event header is read as a refer one: some user
 * agents leave it out, and the dialog has no other subscription it could be for.
 */
export function readReferNotify(event: string | undefined, subscriptionState: string | undefined, body: string): ReferNotify | null {
  let id: string | null = null;
  if (event !== undefined) {
    const semicolon = event.indexOf(';');
    if ((semicolon < 0 ? event : event.slice(0, semicolon)).trim().toLowerCase() !== 'refer') return null;
    if (semicolon >= 0) id = parseParams(event.slice(semicolon)).get('id') ?? null;
  }
  // The sipfrag is a SIP message fragment: only its status line matters here.
  const status = /^\s*SIP\/2\.0[ \t]+(\d{3})(?![0-9])/.exec(body)?.[1];
  const state = (subscriptionState ?? '').split(';')[0]!.trim().toLowerCase();
  return { id, status: status === undefined ? null : Number(status), terminated: state === 'terminated' };
}

/** One REFER's way to its outcome. */
export class ReferProgress {
  /** Settles once, with the transfer's outcome; never rejects. */
  readonly outcome: Promise<ReferOutcome>;
  private phase: 'sent' | 'accepted' | 'done' = 'sent';
  /** What a NOTIFY said before the REFER's answer came: over UDP it may overtake the 202. */
  private early: ReferNotify | null = null;
  private timer: NodeJS.Timeout | null = null;
  private resolve!: (outcome: ReferOutcome) => void;
  private readonly onAbort = (): void => this.stop();

  /**
   * @param timeoutMs how long the final NOTIFY is awaited once the REFER was accepted
   * @param id the REFER's CSeq number, which NOTIFYs name in `Event: refer;id=`; null when
   *   not known yet (see {@link ReferProgress.id})
   */
  constructor(
    private readonly timeoutMs: number,
    private readonly signal?: AbortSignal,
    public id: string | null = null,
  ) {
    this.outcome = new Promise((resolve) => (this.resolve = resolve));
    if (signal?.aborted) this.stop();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Whether the outcome is decided. */
  get settled(): boolean {
    return this.phase === 'done';
  }

  /** The REFER's final answer, or null when none came. */
  answered(status: number | null): void {
    if (this.phase !== 'sent') return;
    if (status === null || status >= 300) return this.finish({ result: 'refused', status });
    this.phase = 'accepted';
    const early = this.early;
    this.early = null;
    if (early) this.notified(early);
    if (this.phase !== 'accepted') return;
    this.timer = setTimeout(() => this.finish({ result: 'failed', status: null }), this.timeoutMs);
    this.timer.unref();
  }

  /** A NOTIFY of this dialog's refer subscription (one for another REFER is passed over). */
  notified(notify: ReferNotify): void {
    if (this.phase === 'done') return;
    if (notify.id !== null && this.id !== null && notify.id !== this.id) return;
    const final = notify.status !== null && notify.status >= 200;
    // 100 Trying, 180 Ringing: the target is being called.
    if (!final && !notify.terminated) return;
    if (this.phase === 'sent') {
      if (this.early?.status == null) this.early = notify;
      return;
    }
    if (notify.status === null || !final) return this.finish({ result: 'failed', status: null });
    this.finish(notify.status < 300 ? { result: 'transferred', status: notify.status } : { result: 'failed', status: notify.status });
  }

  /** Stops waiting (the call is gone, or the wait was aborted): the outcome is what is known. */
  stop(): void {
    if (this.phase === 'done') return;
    this.finish({ result: this.phase === 'sent' ? 'refused' : 'failed', status: null });
  }

  private finish(outcome: ReferOutcome): void {
    this.phase = 'done';
    if (this.timer) clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve(outcome);
  }
}
