/**
 * Places the calls ordered through `POST /v1/calls` and keeps them: the order is planned and
 * checked (call-plan.ts), held to the key's and the trunk's limits, and answered 201 at once;
 * the INVITE goes out right after, on the embedded endpoint, with our offer in the trunk's
 * codecs. A 183 with SDP starts the media early (the callee's first words after the answer are
 * not cut off). Once answered, the machine detection runs when asked for, then the route or
 * bot runs in a call session like any call we answer. Each change of state goes to the
 * call's `status_url`. Calls over are kept for an hour ({@link KEEP_ENDED_PER_ACCOUNT} per account at most).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { LoadedRoute } from '../../dialplan/dialplan-loader.js';
import { mediaFromAnswer } from '../call/call-media.js';
import type { PlacedMedia } from '../call/call-session.js';
import { PlacedCallDialog } from '../call/placed-dialog.js';
import type { SessionBody } from '../call/call-dialog.js';
import type { MediaChannel } from '../media/media-channel.js';
import type { CallMedia } from '../media/media-protocol.js';
import type { MediaThread } from '../media/media-thread.js';
import { RtpPortsExhausted } from '../media/rtp-port-pool.js';
import { buildOffer } from '../sdp/build-offer.js';
import { SdpError } from '../sdp/sdp-error.js';
import type { SipEndpoint } from '../sip/sip-endpoint.js';
import { newCallId } from '../sip/sip-headers.js';
import type { CallCodec } from '../telephony-config.js';
import type { LimitCounters } from '../../store/limit-counters.js';
import { OutboundCallLimits } from './call-limits.js';
import { CallOrderError, type CallOrder, type CallOwner } from './call-order.js';
import { planCall, type CallPlan, type PlanContext } from './call-plan.js';
import type { CallStatusEvent, CallStatusSender } from './call-status-events.js';
import type { AmdOutcomeView, MachineDetectionMode } from './machine-detection.js';
import { causeOf, placedCallView, type PlacedCallCause, type PlacedCallRecord } from './placed-call-record.js';

/** Calls over that are kept for `GET /v1/calls`: an hour, and at most this many per account… */
export const KEEP_ENDED_PER_ACCOUNT = 10_000;
/** …and in all (about 1 KB each). */
export const KEEP_ENDED = 50_000;
const KEEP_ENDED_MS = 3_600_000;
/** How long a hangup through the API waits for the call to be over before it answers. */
const HANGUP_WAIT_MS = 3_000;
const SDP = 'application/sdp';

/** What an answered call's session is started with. */
export interface PlacedSessionStart {
  readonly dialog: PlacedCallDialog;
  readonly route: LoadedRoute;
  readonly channel: MediaChannel;
  readonly placed: PlacedMedia;
  /** The number or URI called: the route's `{{called}}`. */
  readonly called: string;
  readonly variables: Readonly<Record<string, string>>;
  /** The key that ordered the call: its account is metered for it. */
  readonly orderedBy: CallOwner;
  /** The codecs a re-offer is answered in (the trunk's, else the deployment's). */
  readonly codecs: readonly CallCodec[];
}

/** A running session, as the dialer needs it. */
export interface PlacedSession {
  /** Settles once the call is over. */
  readonly done: Promise<void>;
  hangup(reason: string): Promise<void>;
}

/** What the dialer works with. */
export interface DialerParts {
  /** The embedded endpoint; null behind drachtio-server (which places no calls for us). */
  readonly endpoint: SipEndpoint | null;
  readonly media: MediaThread;
  readonly mediaAddress: string;
  readonly codecs: readonly CallCodec[];
  /** The routes and trunks now (they follow the files). */
  readonly context: () => PlanContext;
  /** The process's calls in both directions, against `SPRACHROHR_SIP_MAX_CALLS` and each trunk's `max_calls`. */
  readonly calls: CallCount;
  readonly limits: { readonly callsPerSecond: number; readonly callsPerKey: number };
  /** Where the per-key limits are counted (the store's: the deployment's with PostgreSQL). */
  readonly counters: LimitCounters;
  readonly status: CallStatusSender | null;
  /** Checks a bot's or status URL as a callback target. @throws CallOrderError */
  readonly checkUrl: (url: string, field: string) => Promise<void>;
  /** An account's webhook secret: it signs the requests of a bot the account's call runs (null: the deployment's). */
  readonly accountSecret: (accountId: string) => Promise<string | null>;
  /** Runs the machine detection on an answered call's media. */
  readonly detectMachine: (channel: MediaChannel, mode: Exclude<MachineDetectionMode, 'off'>, signal: AbortSignal) => Promise<AmdOutcomeView>;
  /** Starts the call session of an answered call. */
  readonly startSession: (start: PlacedSessionStart) => PlacedSession;
  readonly logger: Logger;
}

/** What the dialer needs of the call admission's counts. */
export interface CallCount {
  readonly activeCalls: number;
  readonly maxCalls: number;
  trunkCalls(name: string): number;
  /** Counts a placed call until the returned function is called. */
  trackPlaced(trunk: string | null): () => void;
}

/** A call in progress: how to stop it. */
interface LiveCall {
  readonly record: PlacedCallRecord;
  readonly order: CallOrder;
  readonly stop: AbortController;
  session: PlacedSession | null;
  done: Promise<void>;
  /** Gives back its place in the key's, the process's and the trunk's counts. */
  readonly release: () => void;
}

/** The outbound calls of one process. */
export class OutboundDialer {
  private readonly live = new Map<string, LiveCall>();
  /** Calls over, in the order they ended… */
  private readonly ended = new Map<string, PlacedCallRecord>();
  /** …and by account. */
  private readonly endedByAccount = new Map<string, Map<string, PlacedCallRecord>>();
  private readonly limits: OutboundCallLimits;
  private closing = false;

  constructor(private readonly parts: DialerParts) {
    this.limits = new OutboundCallLimits(parts.limits.callsPerSecond, parts.limits.callsPerKey, parts.counters);
  }

  /**
   * Orders a call: checks it, takes it against the limits and starts placing it.
   * @throws CallOrderError naming what is wrong or which limit was hit
   */
  async place(order: CallOrder, owner: CallOwner): Promise<PlacedCallRecord> {
    if (!this.parts.endpoint || this.closing)
      throw new CallOrderError(
        'unavailable',
        this.closing ? 'the gateway is shutting down' : 'outbound calls need the embedded SIP endpoint (not drachtio-server)',
      );
    let plan = planCall(order, this.parts.context());
    const bot = order.bot as Record<string, { url?: string }> | undefined;
    const botUrl = bot?.['webhook']?.url ?? bot?.['stream']?.url;
    if (botUrl !== undefined) {
      await this.parts.checkUrl(botUrl.replace(/^ws/, 'http'), 'the bot url');
      // The bot is the account's: its requests are signed with the account's webhook secret, which the account knows.
      const secret = await this.parts.accountSecret(owner.accountId);
      if (secret !== null) plan = { ...plan, route: { ...plan.route, webhookSecret: secret } };
    }
    if (order.status_url !== undefined) await this.parts.checkUrl(order.status_url, 'status_url');
    const counts = this.parts.calls;
    const trunk = plan.trunk;
    const full = (): string | null =>
      counts.activeCalls >= counts.maxCalls
        ? `the gateway has ${counts.activeCalls} calls, its limit (SPRACHROHR_SIP_MAX_CALLS)`
        : trunk && counts.trunkCalls(trunk.name) >= trunk.maxCalls
          ? `trunk ${trunk.name} has ${counts.trunkCalls(trunk.name)} calls, its max_calls`
          : null;
    // A call refused for the gateway's or the trunk's capacity costs the key nothing…
    const before = full();
    if (before !== null) throw new CallOrderError('capacity', before, 5);
    const releaseKey = await this.limits.take(owner.keyId);
    // …and is checked again once the key's (shared) limits are taken: nothing is awaited from
    // here on, so two orders never both take the process's last place.
    const after = full();
    if (after !== null) {
      releaseKey();
      throw new CallOrderError('capacity', after, 5);
    }
    const releaseCount = counts.trackPlaced(trunk?.name ?? null);
    const release = (): void => {
      releaseKey();
      releaseCount();
    };
    const record: PlacedCallRecord = {
      id: `call_${randomBytes(12).toString('base64url')}`,
      keyId: owner.keyId,
      accountId: owner.accountId,
      to: order.to,
      from: plan.addressing.from,
      trunk: plan.trunk?.name ?? null,
      target: plan.addressing.target,
      runs: plan.runs,
      state: 'queued',
      sipStatus: null,
      cause: null,
      sipCallId: null,
      earlyMedia: false,
      amd: null,
      endedBy: null,
      createdAt: new Date(),
      ringingAt: null,
      answeredAt: null,
      endedAt: null,
    };
    const call: LiveCall = { record, order, stop: new AbortController(), session: null, done: Promise.resolve(), release };
    this.live.set(record.id, call);
    call.done = this.dial(call, plan)
      .catch((error: unknown) => {
        this.parts.logger.error({ err: error, call: record.id }, 'an outbound call failed unexpectedly');
        if (record.state !== 'completed' && record.state !== 'failed') this.fail(call, null, 'rejected');
      })
      .finally(() => this.over(call));
    return record;
  }

  /** A call of the account, live or recent; undefined when it has none by that id. */
  get(accountId: string, id: string): PlacedCallRecord | undefined {
    const record = this.live.get(id)?.record ?? this.ended.get(id);
    return record?.accountId === accountId ? record : undefined;
  }

  /** The account's live calls and the recent ones, newest first. */
  list(accountId: string, limit: number): PlacedCallRecord[] {
    this.forgetOld();
    const live = [...this.live.values()].map((call) => call.record).filter((record) => record.accountId === accountId);
    return live
      .concat([...(this.endedByAccount.get(accountId)?.values() ?? [])])
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, limit);
  }

  /**
   * Hangs up a call of the account: cancels it while it rings, ends it once answered; waits
   * until it is over (at most {@link HANGUP_WAIT_MS}) so that the answer shows its end.
   * @returns the call, or undefined when the account has none by that id
   */
  async hangup(accountId: string, id: string): Promise<PlacedCallRecord | undefined> {
    const call = this.live.get(id);
    if (!call) return this.get(accountId, id);
    if (call.record.accountId !== accountId) return undefined;
    if (call.record.endedBy === null && call.record.state === 'answered') call.record.endedBy = 'api';
    call.stop.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([call.done, new Promise((resolve) => (timer = setTimeout(resolve, HANGUP_WAIT_MS)))]);
    clearTimeout(timer);
    return call.record;
  }

  /** Live calls. */
  get size(): number {
    return this.live.size;
  }

  /** Stops every call (cancels the ringing ones, hangs up the others) and waits for them. */
  async close(): Promise<void> {
    this.closing = true;
    const calls = [...this.live.values()];
    for (const call of calls) call.stop.abort();
    await Promise.all(calls.map((call) => call.done));
  }

  private async dial(call: LiveCall, plan: CallPlan): Promise<void> {
    const { record, order } = call;
    let channel: MediaChannel;
    try {
      channel = await this.parts.media.open();
    } catch (error) {
      if (!(error instanceof RtpPortsExhausted)) throw error;
      this.parts.logger.warn({ call: record.id }, 'no RTP port free for an outbound call');
      return this.fail(call, null, 'media');
    }
    const codecs = plan.addressing.codecs ?? this.parts.codecs;
    const offer = buildOffer({ address: this.parts.mediaAddress, port: channel.port, preferences: codecs, sessionId: String(Date.now()), sessionVersion: 1 });
    const callId = newCallId(this.parts.mediaAddress);
    record.sipCallId = callId;
    const dialog = new PlacedCallDialog({
      callId,
      from: record.from,
      called: order.to,
      firstHop: plan.firstHop,
      cancel: () => call.stop.abort(),
    });
    let settleAnswer: (answered: boolean) => void = () => undefined;
    const answered = new Promise<boolean>((resolve) => (settleAnswer = resolve));
    const early = order.listen_early_media === true;
    let placed;
    try {
      placed = await this.parts.endpoint!.placeCall(
        {
          target: plan.addressing.target,
          from: plan.addressing.from,
          callId,
          offer: { contentType: SDP, body: Buffer.from(offer) },
          ringTimeoutMs: plan.ringTimeoutMs,
          onProgress: (_status, body) => {
            const media = this.progress(call, channel, offer, plan.firstHop.address, body);
            // The route may listen to the early media: its session starts now, its speech waits for the answer.
            if (media && early && !call.session) this.startRoute(call, plan, dialog, channel, { offer, media, answered });
          },
          ...(plan.addressing.credentials ? { credentials: plan.addressing.credentials } : {}),
          ...(plan.addressing.tlsCa ? { tlsCa: plan.addressing.tlsCa } : {}),
        },
        call.stop.signal,
      );
    } catch (error) {
      dialog.unanswered();
      settleAnswer(false);
      await channel.close();
      throw error;
    }
    if ('failed' in placed) {
      dialog.unanswered();
      settleAnswer(false);
      await call.session?.done;
      await channel.close();
      return this.fail(call, typeof placed.failed === 'number' ? placed.failed : null, causeOf(placed.failed));
    }
    const answer = placed.answered;
    dialog.answeredBy(answer);
    record.sipStatus = 200;
    let media;
    try {
      if (!placed.answer || placed.answer.contentType !== SDP) throw new SdpError(488, 'the 200 carried no SDP answer to our offer');
      media = mediaFromAnswer(offer, placed.answer.body.toString('utf8'), answer.peer.address);
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      this.parts.logger.warn({ call: record.id, detail: error.detail }, 'the callee answered with media we cannot take');
      settleAnswer(false);
      await answer.hangup('no usable media');
      await call.session?.done;
      await channel.close();
      return this.fail(call, 200, 'media');
    }
    // The session (and the detection before it) hear the callee on the answer's media.
    channel.negotiated(media);
    record.state = 'answered';
    record.answeredAt = new Date();
    this.report(call, 'answered');
    answer.once('ended', (reason) => {
      if (reason === 'bye' && record.endedBy === null) record.endedBy = 'callee';
    });
    const onStop = (): void => void dialog.hangup('hung up through the API');
    call.stop.signal.addEventListener('abort', onStop, { once: true });
    settleAnswer(true);
    if (!call.session) await this.detectThenRoute(call, plan, dialog, channel, { offer, media });
    await call.session?.done;
    record.endedBy ??= 'gateway';
    this.complete(call);
  }

  /** A 180/183: ringing; with SDP, the callee's early media starts flowing to us (returned). */
  private progress(call: LiveCall, channel: MediaChannel, offer: string, firstHop: string, body: SessionBody | null): CallMedia | null {
    if (call.record.state === 'queued') {
      call.record.state = 'ringing';
      call.record.ringingAt = new Date();
      this.report(call, 'ringing');
    }
    if (call.record.earlyMedia || !body || body.contentType !== SDP) return null;
    try {
      const media = mediaFromAnswer(offer, body.body.toString('utf8'), firstHop);
      channel.negotiated(media);
      call.record.earlyMedia = true;
      return media;
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      this.parts.logger.info({ call: call.record.id, detail: error.detail }, 'early media we cannot take; waiting for the answer');
      return null;
    }
  }

  /** The callee answered: machine detection if asked for, then the route in a call session. */
  private async detectThenRoute(call: LiveCall, plan: CallPlan, dialog: PlacedCallDialog, channel: MediaChannel, placed: PlacedMedia): Promise<void> {
    const { record, order } = call;
    const calleeGone = new AbortController();
    dialog.once('ended', () => calleeGone.abort());
    const stopped = AbortSignal.any([call.stop.signal, calleeGone.signal]);
    const mode = order.machine_detection ?? 'off';
    if (mode !== 'off') {
      record.amd = await this.parts.detectMachine(channel, mode, stopped).catch((error: unknown) => {
        if (!stopped.aborted) this.parts.logger.warn({ err: error, call: record.id }, 'machine detection failed');
        return null;
      });
      this.parts.logger.info({ call: record.id, amd: record.amd }, 'machine detection');
    }
    if (stopped.aborted) {
      await dialog.hangup();
      await channel.close();
      return;
    }
    this.startRoute(call, plan, dialog, channel, placed);
  }

  /** Starts the order's route (or bot) in a call session, with the order's variables and the detection's. */
  private startRoute(call: LiveCall, plan: CallPlan, dialog: PlacedCallDialog, channel: MediaChannel, placed: PlacedMedia): void {
    const { record, order } = call;
    const amd = record.amd;
    const variables = {
      ...order.variables,
      ...(amd ? { amd: amd.result, amd_ms: String(amd.after_ms), amd_reason: amd.reason, amd_beep: amd.beep === null ? '' : String(amd.beep) } : {}),
    };
    call.session = this.parts.startSession({
      dialog,
      route: plan.route,
      channel,
      placed,
      called: order.to,
      variables,
      orderedBy: { accountId: record.accountId, keyId: record.keyId },
      codecs: plan.addressing.codecs ?? this.parts.codecs,
    });
  }

  private complete(call: LiveCall): void {
    call.record.state = 'completed';
    call.record.endedAt = new Date();
    this.report(call, 'completed');
  }

  private fail(call: LiveCall, sipStatus: number | null, cause: PlacedCallCause): void {
    call.record.state = 'failed';
    call.record.sipStatus = sipStatus;
    call.record.cause = cause;
    call.record.endedAt = new Date();
    this.parts.logger.info({ call: call.record.id, sipStatus, cause }, 'outbound call not answered');
    this.report(call, 'failed');
  }

  private report(call: LiveCall, event: CallStatusEvent): void {
    const url = call.order.status_url;
    if (url !== undefined) this.parts.status?.send(url, call.record.accountId, event, placedCallView(call.record));
  }

  /** A call is over: its limits are released and it is kept among the recent ones. */
  private over(call: LiveCall): void {
    this.live.delete(call.record.id);
    call.release();
    const record = call.record;
    this.ended.set(record.id, record);
    let account = this.endedByAccount.get(record.accountId);
    if (!account) this.endedByAccount.set(record.accountId, (account = new Map()));
    account.set(record.id, record);
    // One busy account does not push out the others' calls.
    if (account.size > KEEP_ENDED_PER_ACCOUNT) this.forget(account.keys().next().value!);
    this.forgetOld();
  }

  /** Drops the calls over that ended more than an hour ago, and the oldest beyond {@link KEEP_ENDED}. */
  private forgetOld(): void {
    const oldest = Date.now() - KEEP_ENDED_MS;
    for (const [id, record] of this.ended) {
      if (this.ended.size <= KEEP_ENDED && (record.endedAt?.getTime() ?? 0) >= oldest) break;
      this.forget(id);
    }
  }

  private forget(id: string): void {
    const record = this.ended.get(id);
    if (!record) return;
    this.ended.delete(id);
    const account = this.endedByAccount.get(record.accountId);
    account?.delete(id);
    if (account?.size === 0) this.endedByAccount.delete(record.accountId);
  }
}
