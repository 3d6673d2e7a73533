/**
 * One incoming call's signalling through a drachtio-server, as the call session sees any
 * dialog ({@link CallDialog}). Before the answer it works on drachtio-srf's request and
 * response (183, refusals, the caller's CANCEL); `accept` makes drachtio-srf's UAS dialog
 * (`srf.createUAS`), which then carries the ACK, BYE both ways, re-INVITE/UPDATE, INFO, and
 * a blind transfer's REFER with the NOTIFYs that report on it. drachtio-server does the SIP
 * itself (100 Trying, retransmissions, the 487 after a CANCEL, BYE after a missing ACK); this
 * only decides.
 */
import { EventEmitter } from 'node:events';
import type { CallDialog, CallDialogEvents, DialogEndReason, ReferOptions, ReferOutcome, SessionBody } from '../call/call-dialog.js';
import { checkedExtraHeaders } from '../sip/extra-headers.js';
import { DEFAULT_REFER_TIMEOUT_MS, readReferNotify, ReferProgress, referredByValue, referToValue } from '../sip/refer-progress.js';
import { parseNameAddress, q850Reason } from '../sip/sip-headers.js';
import type { SipRequest } from '../sip/sip-message.js';
import { bodyOf } from '../sip/sip-dialog.js';
import type { SipPeer } from '../sip/sip-transport.js';
import { bodyOfRequest, drachtioHeaders, type DrachtioHeaders, type DrachtioRequest, type DrachtioResponse } from './drachtio-message.js';

/** The INVITE as drachtio-srf hands it over: its CANCEL arrives as an event on it. */
export interface DrachtioInvite extends DrachtioRequest {
  on(event: 'cancel', listener: () => void): unknown;
}

/** A response to a request we sent inside the dialog, as drachtio-srf hands it over. */
export interface DrachtioReply {
  readonly status: number;
  get(name: string): string | undefined;
}

/** drachtio-srf's dialog after the answer, as far as it is used here. */
export interface DrachtioUas {
  /** Our Contact, which a 2xx to a re-INVITE or UPDATE must carry again. */
  readonly local: { readonly contact?: string };
  on(event: 'ack' | 'destroy', listener: (request: DrachtioRequest) => void): unknown;
  on(event: 'modify' | 'update' | 'info' | 'notify', listener: (request: DrachtioRequest, response: DrachtioResponse) => void): unknown;
  /** Sends BYE (with extra headers); settles with the final response to it. */
  destroy(options?: { readonly headers?: DrachtioHeaders }): Promise<unknown>;
  /**
   * Sends a request inside the dialog. The callback runs for each response (a provisional one
   * too), or once with the error when the request could not be sent.
   */
  request(
    options: { readonly method: string; readonly headers?: DrachtioHeaders; readonly body?: string },
    callback: (error: unknown, response?: DrachtioReply) => void,
  ): unknown;
}

/**
 * `srf.createUAS` in its callback form: it sends the 200 with our body and calls back with
 * the dialog as soon as drachtio-server reports the 200 sent (before the ACK). The callback
 * runs in the same turn as that report, so the dialog's listeners are attached before any
 * request that arrived right behind it (the ACK, a quick BYE) is handed out.
 */
export type CreateUas = (
  invite: DrachtioInvite,
  response: DrachtioResponse,
  options: { localSdp: string; headers: DrachtioHeaders },
  done: (error: unknown, uas?: DrachtioUas) => void,
) => void;

/**
 * How long a BYE of ours may take. drachtio-server answers every request it sends (408 at the
 * latest, after 64 × T1), but a lost connection to it would leave the wait open for ever.
 */
const BYE_WAIT_MS = 32_000;

/** How long the answer to a REFER may take, for the same reason. */
const REFER_ANSWER_WAIT_MS = 32_000;

/** One call's signalling through drachtio-server. */
export class DrachtioDialog extends EventEmitter<CallDialogEvents> implements CallDialog {
  readonly callId: string;
  readonly callerUri: string;
  readonly offer: SessionBody | null;
  private state: 'early' | 'answering' | 'confirmed' | 'ended' = 'early';
  private uas: DrachtioUas | null = null;
  /** The dialog being made by `accept`, for a hangup that comes meanwhile. */
  private answering: Promise<DrachtioUas | null> | null = null;
  private pendingAck: { resolve: (ack: DrachtioRequest) => void; reject: (error: Error) => void } | null = null;
  /** The ACK of our 200, awaited from the moment the dialog exists. */
  private acked: Promise<DrachtioRequest> | null = null;
  private reofferPending = false;
  /** The blind transfer under way, if any. */
  private referral: ReferProgress | null = null;
  /** Whether we ever sent a REFER: a NOTIFY is only expected then. */
  private referred = false;

  /**
   * @param invite the INVITE as our parser reads it (headers for admission and the offer)
   * @param calledUser the Request-URI's user part
   */
  constructor(
    readonly invite: SipRequest,
    readonly source: SipPeer,
    readonly calledUser: string | null,
    private readonly request: DrachtioInvite,
    private readonly response: DrachtioResponse,
    private readonly createUas: CreateUas,
  ) {
    super();
    this.callId = invite.headers.get('Call-ID') ?? '';
    this.callerUri = parseNameAddress(invite.headers.get('From') ?? '')?.uri ?? '';
    this.offer = bodyOf(invite);
    request.on('cancel', () => this.cancelled());
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /** 183 Session Progress with an answer, so the caller hears early media. */
  progress(answer: SessionBody): void {
    if (this.state !== 'early') return;
    this.response.send(183, { body: answer.body.toString('utf8'), headers: { 'Content-Type': answer.contentType } });
  }

  /**
   * 200 OK with our answer (or our offer, when the INVITE had none). Resolves with the ACK's
   * body; rejects when the call ends first (drachtio-server sends BYE itself when no ACK comes).
   */
  async accept(body: SessionBody): Promise<SessionBody | null> {
    if (this.state !== 'early') throw new Error('the call was already answered or is over');
    this.state = 'answering';
    const answering = new Promise<DrachtioUas>((resolve, reject) => {
      this.createUas(this.request, this.response, { localSdp: body.body.toString('utf8'), headers: { 'Content-Type': body.contentType } }, (error, uas) => {
        if (error || !uas) return reject(error instanceof Error ? error : new Error(`the 200 could not be sent: ${String(error)}`));
        this.established(uas);
        resolve(uas);
      });
    });
    this.answering = answering.catch(() => null);
    try {
      await answering;
    } catch (error) {
      this.end('shutdown');
      throw error;
    }
    if (this.ended || !this.acked) throw new Error('the call ended while it was being answered');
    return bodyOfRequest(await this.acked);
  }

  /** Refuses the call with a final status. */
  reject(status: number, headers: Iterable<readonly [string, string]> = []): void {
    if (this.state !== 'early') return;
    this.response.send(status, { headers: drachtioHeaders(headers) });
    this.end('rejected');
  }

  /**
   * Ends the call from our side: BYE when answered (with `reason` in an RFC 3326 Reason
   * header), 480 when it was still ringing.
   */
  async hangup(reason?: string): Promise<void> {
    const headers: DrachtioHeaders = reason ? { Reason: q850Reason(reason) } : {};
    switch (this.state) {
      case 'ended':
        return;
      case 'early':
        this.response.send(480);
        this.end('hangup');
        return;
      case 'answering': {
        const answering = this.answering;
        this.end('hangup');
        const uas = await answering;
        if (uas) await this.bye(uas, headers);
        return;
      }
      case 'confirmed':
        this.end('hangup');
        await this.bye(this.uas!, headers);
    }
  }

  /**
   * Asks the caller's side to call `target` (REFER, RFC 3515) through drachtio-server and
   * follows its NOTIFYs. drachtio-srf forgets the dialog at its BYE, so a NOTIFY that comes
   * after the call ended is not seen here: the wait then ends `failed` (null).
   * @throws RangeError when `target` is not a SIP URI or a header is refused; Error while
   *   another REFER of this call is under way
   */
  async refer(target: string, options: ReferOptions = {}, signal?: AbortSignal): Promise<ReferOutcome> {
    const referTo = referToValue(target);
    const referredBy = referredByValue(options.referredBy ?? parseNameAddress(this.invite.headers.get('To') ?? '')?.uri ?? '');
    const extra = checkedExtraHeaders(options.headers, ['Refer-To', 'Referred-By']);
    if (this.state !== 'confirmed' || !this.uas) return { result: 'refused', status: null };
    if (this.referral) throw new Error('a REFER of this call is already under way');
    const progress = new ReferProgress(options.timeoutMs ?? DEFAULT_REFER_TIMEOUT_MS, signal);
    this.referral = progress;
    this.referred = true;
    const timer = setTimeout(() => progress.answered(null), REFER_ANSWER_WAIT_MS);
    timer.unref();
    const headers = drachtioHeaders([['Refer-To', referTo], ['Referred-By', referredBy], ...extra]);
    this.uas.request({ method: 'REFER', headers }, (error, response) => {
      if (!error && response && response.status < 200) return;
      clearTimeout(timer);
      // The REFER's CSeq number is the id its NOTIFYs name; drachtio-server chose it.
      progress.id = /^\s*(\d+)/.exec(response?.get('CSeq') ?? '')?.[1] ?? null;
      progress.answered(error || !response ? null : response.status);
    });
    try {
      return await progress.outcome;
    } finally {
      clearTimeout(timer);
      this.referral = null;
    }
  }

  /** The dialog exists (the 200 is out): listen to what comes inside it. */
  private established(uas: DrachtioUas): void {
    this.uas = uas;
    if (this.state === 'answering') this.state = 'confirmed';
    this.acked = new Promise((resolve, reject) => {
      this.pendingAck = { resolve, reject };
    });
    // Only accept awaits it; a call that ends first must not leave a rejection unhandled.
    this.acked.catch(() => undefined);
    uas.on('ack', (ack) => {
      // Later ACKs (to re-INVITEs) need nothing from us.
      const pending = this.pendingAck;
      this.pendingAck = null;
      pending?.resolve(ack);
    });
    uas.on('destroy', (bye) => {
      if (this.state === 'ended') return;
      // A BYE made by drachtio-server itself ends a dialog whose 200 got no ACK.
      if (bye.source === 'application') return this.end(this.pendingAck ? 'ack-timeout' : 'bye');
      this.emit('bye');
      this.end('bye');
    });
    uas.on('modify', (request, response) => this.reoffer(request, response));
    uas.on('update', (request, response) => this.reoffer(request, response));
    uas.on('info', (request, response) => {
      response.send(200);
      this.emit('info', bodyOfRequest(request) ?? { contentType: '', body: Buffer.alloc(0) });
    });
    uas.on('notify', (request, response) => this.notified(request, response));
  }

  /** A NOTIFY: progress of a transfer we asked for (RFC 3515 section 2.4.5), answered 200. */
  private notified(request: DrachtioRequest, response: DrachtioResponse): void {
    const notify = readReferNotify(request.get('Event'), request.get('Subscription-State'), request.body);
    if (!notify) return response.send(489, { headers: { 'Allow-Events': 'refer' } });
    // RFC 6665 section 4.1.3: a NOTIFY that matches no subscription of ours gets 481.
    if (!this.referred) return response.send(481);
    response.send(200);
    this.referral?.notified(notify);
  }

  /** The caller cancelled; drachtio-server has already answered 200 to it and 487 to the INVITE. */
  private cancelled(): void {
    if (this.state !== 'early' && this.state !== 'answering') return;
    this.emit('cancel');
    this.end('cancel');
  }

  /** A re-INVITE or UPDATE: the call session answers through `reply`. */
  private reoffer(request: DrachtioRequest, response: DrachtioResponse): void {
    if (this.state !== 'confirmed' || this.reofferPending || this.pendingAck) {
      response.send(491);
      return;
    }
    this.reofferPending = true;
    let replied = false;
    const reply = (answer: SessionBody | number): void => {
      if (replied || this.state === 'ended') return;
      replied = true;
      this.reofferPending = false;
      if (typeof answer === 'number') return response.send(answer);
      const contact = this.uas?.local.contact;
      response.send(200, { body: answer.body.toString('utf8'), headers: { 'Content-Type': answer.contentType, ...(contact ? { Contact: contact } : {}) } });
    };
    if (this.listenerCount('reoffer') === 0) reply(488);
    else this.emit('reoffer', bodyOfRequest(request), reply);
  }

  private async bye(uas: DrachtioUas, headers: DrachtioHeaders): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, BYE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([uas.destroy({ headers }).catch(() => undefined), waited]);
    clearTimeout(timer);
  }

  private end(reason: DialogEndReason): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    const pending = this.pendingAck;
    this.pendingAck = null;
    pending?.reject(new Error(`the call ended (${reason})`));
    // drachtio-srf drops the dialog's listeners at its end: no NOTIFY can come any more.
    this.referral?.stop();
    this.emit('ended', reason);
  }
}
