/**
 * Session timers (RFC 4028) on the calls the gateway places. Our INVITE says `Supported: timer`
 * with `Session-Expires` and `Min-SE`; the 2xx decides. With `refresher=uac` (or no refresher)
 * we refresh at half the interval; with `refresher=uas` the callee does, each of its re-INVITEs
 * or UPDATEs starts the interval again, and when none came we hang up a little before the
 * session would expire. A 2xx without Session-Expires means no timer. A refresh of ours that
 * times out or gets 408 or 481 ends the call with BYE, as does a session left unrefreshed to
 * its end. Whatever the answers say goes, small intervals too: the interval is theirs to pick.
 *
 * In RFC 4028 `uac` and `uas` name the roles in the refresh request that carried the header,
 * not in the dialog: in a callee's refresh, `refresher=uac` means the callee.
 */
import { parseParams } from './sip-headers.js';
import type { InviteClientTransaction, InviteClientUser } from './sip-invite-client.js';
import { serializeMessage, type SipHeaders, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import type { SipPeer } from './sip-transport.js';
import { TimerSet } from './timer-set.js';

/** The session interval our INVITE asks for unless the call says otherwise (section 4 recommends it). */
export const DEFAULT_SESSION_EXPIRES_S = 1800;

/** The smallest interval we ask for, and our Min-SE: the least section 5 allows. */
export const MIN_SE_S = 90;

/**
 * Longest interval kept: a timer longer than Node's (2^31 − 1 ms, some 24.8 days) would fire at
 * once. A callee asking for more is treated as asking for this.
 */
const MAX_SESSION_EXPIRES_S = 2_000_000;

/** RFC 4028 section 10: the side that does not refresh hangs up this much before the end, or a third of the interval when that is less. */
const WATCH_MARGIN_MS = 32_000;

/** Which side of the request that carries the header refreshes. */
export type Refresher = 'uac' | 'uas';

/** A Session-Expires header value. */
export interface SessionExpires {
  readonly seconds: number;
  readonly refresher: Refresher | null;
}

const DELTA_SECONDS = /^\d{1,10}$/;

/** Parses a Session-Expires value (`1800;refresher=uac`); null when it is absent, malformed or 0. */
export function parseSessionExpires(value: string | undefined): SessionExpires | null {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  const delta = (semicolon < 0 ? value : value.slice(0, semicolon)).trim();
  if (!DELTA_SECONDS.test(delta) || Number(delta) === 0) return null;
  const refresher = parseParams(semicolon < 0 ? '' : value.slice(semicolon))
    .get('refresher')
    ?.toLowerCase();
  return { seconds: Math.min(Number(delta), MAX_SESSION_EXPIRES_S), refresher: refresher === 'uac' || refresher === 'uas' ? refresher : null };
}

/** Parses a Min-SE value (`120`, parameters allowed); null when it is absent or malformed. */
export function parseMinSe(value: string | undefined): number | null {
  const delta = value?.split(';')[0]!.trim();
  return delta !== undefined && DELTA_SECONDS.test(delta) ? Math.min(Number(delta), MAX_SESSION_EXPIRES_S) : null;
}

/** A message's Session-Expires, written out or in its compact form `x`. */
export function sessionExpiresOf(message: { readonly headers: SipHeaders }): SessionExpires | null {
  return parseSessionExpires(message.headers.get('Session-Expires') ?? message.headers.get('x'));
}

/** Whether a list header (Supported, Require, Allow) names `token`. */
function lists(headers: SipHeaders, name: string, token: string): boolean {
  return headers.getAll(name).some((value) => value.trim().toLowerCase() === token);
}

/**
 * The session interval of a call to place, checked.
 * @throws RangeError unless it is 0 (no timer) or a whole number of seconds from {@link MIN_SE_S}
 */
export function checkedSessionInterval(seconds = DEFAULT_SESSION_EXPIRES_S): number {
  if (seconds === 0 || (Number.isInteger(seconds) && seconds >= MIN_SE_S && seconds <= MAX_SESSION_EXPIRES_S)) return seconds;
  throw new RangeError(`the session interval ${seconds} s is neither 0 nor a whole number of seconds from ${MIN_SE_S} to ${MAX_SESSION_EXPIRES_S}`);
}

/**
 * Asks for a session timer in our INVITE (section 7.1): `timer` joins the Supported the
 * application may have written (one header), with Session-Expires and Min-SE. No refresher is
 * named: the section recommends leaving the choice to the callee, and a carrier that insists on
 * refreshing itself would otherwise have to overrule us.
 */
export function askForSessionTimer(headers: SipHeaders, seconds: number): void {
  const supported = headers.getAll('Supported');
  if (!supported.some((tag) => tag.toLowerCase() === 'timer')) supported.push('timer');
  headers.set('Supported', supported.join(', ')).set('Session-Expires', String(seconds)).set('Min-SE', String(MIN_SE_S));
}

/**
 * After a 422 (section 7.3): the Session-Expires and Min-SE of the INVITE sent again, the
 * interval raised to the 422's Min-SE; null when the 422 asks for no more than we did.
 */
export function raisedAfter422(invite: SipRequest, response: SipResponse): Array<[string, string]> | null {
  const asked = sessionExpiresOf(invite)?.seconds ?? 0;
  const least = parseMinSe(response.headers.get('Min-SE'));
  if (least === null || least <= asked) return null;
  return [
    ['Session-Expires', String(least)],
    ['Min-SE', String(least)],
  ];
}

/** What the timer needs from the endpoint. */
export interface RefreshHost {
  /** Sends a non-INVITE request; resolves with its final response, or null when none came. */
  request(request: SipRequest, peer: SipPeer): Promise<SipResponse | null>;
  startInvite(invite: SipRequest, peer: SipPeer, user: InviteClientUser): InviteClientTransaction;
  sendRaw(data: Buffer, peer: SipPeer): void;
}

/** What the timer needs from its dialog. */
export interface TimedDialog {
  /** A refresh with the dialog's next CSeq and these headers; a re-INVITE carries our last session description. */
  refreshRequest(method: 'INVITE' | 'UPDATE', headers: ReadonlyArray<readonly [string, string]>): SipRequest;
  /** The ACK of our re-INVITE numbered `seq`. */
  ackRequest(seq: number): SipRequest;
  /** Whether an INVITE of the callee's is still being answered: none of ours may cross it (RFC 3261 section 14.1). */
  busy(): boolean;
  /** Hangs up with BYE, `reason` in its Reason header. */
  expire(reason: string): void;
}

/** The session timer of one answered call we placed. */
export class SessionTimer {
  private readonly timers = new TimerSet();
  /** The session interval in force, in seconds; 0 when the session has none. */
  private interval = 0;
  /** The largest Min-SE seen (section 7.4 repeats it in our refreshes). */
  private minSe: number;
  private weRefresh = false;
  /** Refresh with UPDATE: the callee's Allow lists it. */
  private useUpdate: boolean;
  /** When the session ends unless refreshed (ms since the epoch). */
  private expiresAt = 0;
  /** Our refresh awaiting its answer, and its INVITE transaction when it is a re-INVITE. */
  private inFlight = false;
  private reinvite: InviteClientTransaction | null = null;
  private stopped = false;

  /**
   * @param invite our INVITE that was answered
   * @param answer its 2xx
   */
  constructor(
    private readonly host: RefreshHost,
    private readonly peer: SipPeer,
    invite: SipRequest,
    answer: SipResponse,
    private readonly dialog: TimedDialog,
  ) {
    this.minSe = parseMinSe(invite.headers.get('Min-SE')) ?? MIN_SE_S;
    this.useUpdate = lists(answer.headers, 'Allow', 'update');
    // Section 7.2: the 2xx says whether there is a timer and who refreshes. A 2xx that names no
    // refresher is taken as ours: a refresh too many harms nobody, a hang-up too early does.
    const expires = sessionExpiresOf(answer);
    if (expires) this.restart(expires.seconds, expires.refresher !== 'uas');
  }

  /** Whether our re-INVITE is awaiting its answer: the callee's would cross it (491). */
  get reinviting(): boolean {
    return this.reinvite !== null;
  }

  /**
   * Headers of our 2xx to the callee's re-INVITE or UPDATE, which refreshes the session
   * (section 9), and the timer started again. The callee's refresher is echoed; when it names
   * none, the callee goes on refreshing (it sent this refresh). A callee that does not say
   * `Supported: timer` cannot be the refresher: we are. `Require: timer` tells a callee that
   * supports timers that we apply one. Its interval is taken as it is, below our Min-SE too
   * (no 422: the call goes on). A request without Session-Expires ends the timer.
   */
  refreshedByCallee(request: SipRequest): Array<[string, string]> {
    if (this.stopped) return [];
    const expires = sessionExpiresOf(request);
    if (!expires) {
      this.restart(0, false);
      return [];
    }
    this.minSe = Math.max(this.minSe, parseMinSe(request.headers.get('Min-SE')) ?? 0);
    const supported = lists(request.headers, 'Supported', 'timer');
    const refresher: Refresher = supported ? (expires.refresher ?? 'uac') : 'uas';
    this.restart(expires.seconds, refresher === 'uas');
    const headers: Array<[string, string]> = [['Session-Expires', `${expires.seconds};refresher=${refresher}`]];
    if (supported) headers.push(['Require', 'timer']);
    return headers;
  }

  /** Stops the timer for good (the call ended), with the refresh under way. */
  stop(): void {
    this.stopped = true;
    this.timers.clear();
    const reinvite = this.reinvite;
    this.reinvite = null;
    reinvite?.terminate();
  }

  /** Sets the interval (0: none) and who refreshes, counting from now. */
  private restart(seconds: number, weRefresh: boolean): void {
    this.timers.clear();
    this.interval = seconds;
    this.weRefresh = weRefresh;
    if (this.stopped || seconds === 0) return;
    const ms = seconds * 1000;
    this.expiresAt = Date.now() + ms;
    if (weRefresh) {
      // Section 10: the refresh goes at half the interval; a session nothing refreshed ends with it.
      this.timers.after(ms / 2, () => this.refresh());
      this.timers.after(ms, () => this.dialog.expire('the session expired unrefreshed'));
    } else {
      this.timers.after(ms - Math.min(WATCH_MARGIN_MS, ms / 3), () => this.dialog.expire('no session refresh came'));
    }
  }

  /**
   * Our refresh (section 7.4). Section 7.4 recommends UPDATE without a body when the callee
   * allows UPDATE: no offer, so nothing about the media can change, and no ACK. Otherwise a
   * re-INVITE with our last session description, unchanged (the section: a re-INVITE should
   * carry an offer), which every SIP peer takes. `tries` counts the tries sent at once after
   * a 422 or an UPDATE refused.
   */
  private refresh(method: 'INVITE' | 'UPDATE' = this.useUpdate ? 'UPDATE' : 'INVITE', tries = 1): void {
    if (this.stopped || this.inFlight || !this.weRefresh) return;
    if (method === 'INVITE' && this.dialog.busy()) return this.retryLater();
    this.inFlight = true;
    const request = this.dialog.refreshRequest(method, [
      ['Supported', 'timer'],
      ['Session-Expires', `${this.interval};refresher=uac`],
      // Never above the interval: the request would contradict itself.
      ['Min-SE', String(Math.min(this.minSe, this.interval))],
    ]);
    void this.send(request).then((response) => {
      this.inFlight = false;
      this.reinvite = null;
      if (!this.stopped) this.answered(method, response, tries);
    });
  }

  private answered(method: 'INVITE' | 'UPDATE', response: SipResponse | null, tries: number): void {
    const status = response?.status ?? 408;
    if (response && status < 300) {
      // Section 7.2 again: the 2xx may change the interval or the refresher, or end the timer.
      const expires = sessionExpiresOf(response);
      return this.restart(expires?.seconds ?? 0, expires?.refresher !== 'uas');
    }
    // Section 10: the other side lost the call, or is gone.
    if (status === 408 || status === 481) return this.dialog.expire(`the session refresh failed (${response ? status : 'no answer'})`);
    if (tries < 3 && status === 422) {
      const least = parseMinSe(response?.headers.get('Min-SE'));
      if (least !== null && least > this.interval) {
        this.minSe = least;
        this.interval = least;
        return this.refresh(method, tries + 1);
      }
    }
    if (tries < 3 && method === 'UPDATE' && (status === 405 || status === 501)) {
      this.useUpdate = false;
      return this.refresh('INVITE', tries + 1);
    }
    // Only a 2xx refreshes (section 10): try again while the session lasts.
    this.retryLater();
  }

  /** Another try after RFC 3261 section 14.1's 2.1 to 4 s (we chose the Call-ID), within what is left of the session. */
  private retryLater(): void {
    const left = this.expiresAt - Date.now();
    this.timers.after(Math.max(50, Math.min(2100 + Math.random() * 1900, left / 2)), () => this.refresh());
  }

  /** Sends a refresh; resolves with its final answer, or null when none came (or the call ended). */
  private send(request: SipRequest): Promise<SipResponse | null> {
    if (request.method !== 'INVITE') return this.host.request(request, this.peer);
    return new Promise((resolve) => {
      let ack: Buffer | null = null;
      this.reinvite = this.host.startInvite(request, this.peer, {
        provisional: () => undefined,
        accepted: (response) => {
          // Every 2xx is acknowledged, retransmissions too (RFC 3261 section 13.2.2.4).
          ack ??= serializeMessage(this.dialog.ackRequest(cseqOf(request).seq));
          this.host.sendRaw(ack, this.peer);
          resolve(response);
        },
        rejected: resolve,
        unreachable: () => resolve(null),
        terminated: () => resolve(null),
      });
    });
  }
}
