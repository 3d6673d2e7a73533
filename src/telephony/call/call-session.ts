/**
 * One phone call: the SIP dialog, its media session and the dialplan route it runs, with the
 * events between them typed (keys, hold, codec changes, barge-in, hangup). It answers the call
 * (the caller's offer answered, or our offer in the 200 and the answer in the ACK; the SDP
 * itself is call-negotiation.ts), runs the steps, meters what was spoken and heard, and closes everything it opened.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../../../engine/registry.js';
import type { NewRecording } from '../../recordings/recording.js';
import type { LoadedRoute } from '../../dialplan/dialplan-loader.js';
import type { MediaChannel } from '../media/media-channel.js';
import type { CallMedia } from '../media/media-protocol.js';
import { SdpError } from '../sdp/sdp-error.js';
import type { SessionBody, SessionDialog } from './call-dialog.js';
import { fillPlaceholders } from '../../dialplan/placeholders.js';
import { runRoute } from '../../dialplan/run-route.js';
import type { CallMetering } from '../../metering/call-meter.js';
import { CallAllowanceGuard, type GuardedCall } from './call-allowance.js';
import type { CallVoice, ListenRequest, StepContext, TransferRequest, RecordRequest, StreamRequest } from '../../dialplan/steps/step-context.js';
import { listenForCaller, speakPrompt } from './call-turns.js';
import { abortableDelay } from './abortable-delay.js';
import { CallNegotiation, SDP } from './call-negotiation.js';
import { FrameRing } from './frame-ring.js';
import { captureMessage, type CapturedMessage } from './call-recording.js';
import type { TrunkConfig } from '../trunks/trunk-loader.js';
import { addressTransfer, bridgedTransfer, failedTransfer, type CallPlacer } from './call-transfer.js';
import { streamToBot } from './call-stream.js';
import type { CallCodec } from '../telephony-config.js';

/** What a call reports as it goes. */
export interface CallSessionEvents {
  dtmf: [key: string];
  transcript: [text: string];
  /** The caller put the call on hold (true) or took it off (false). */
  hold: [held: boolean];
  'codec-change': [codec: string];
  /** The caller spoke over a prompt; `heardSeconds` of it had been played. */
  'barge-in': [heardSeconds: number];
  /** End of caller speech → first packet of the reply, per turn. */
  'turn-latency': [milliseconds: number];
  /** What the call used, for metering (the ledger reads these). */
  usage: [usage: CallUsage];
  ended: [reason: string];
}

export interface CallUsage {
  readonly callId: string;
  readonly route: string;
  readonly engines: 'live' | 'synthetic';
  readonly ttsSeconds: number;
  readonly sttSeconds: number;
  readonly durationSeconds: number;
}

/** What a call needs from the telephony service. */
export interface CallServices {
  readonly engines: EngineRegistry;
  readonly logger: Logger;
  /** Our media address for SDP. */
  readonly mediaAddress: string;
  readonly codecs: readonly CallCodec[];
  /** Where voicemails go (the recordings of `GET /v1/recordings`). */
  readonly recordings: RecordingSink;
  /** Places the second call of a bridged transfer. */
  readonly placeCall: CallPlacer;
  /** Signs webhook bots' requests (`SPRACHROHR_WEBHOOK_SECRET`); null: unsigned. */
  readonly webhookSecret: string | null;
  /** Meters the call for its dialplan's account and holds it to the account's entitlements; null: not metered. */
  readonly metering?: CallMetering | null;
  /** How often a running call is checked against its entitlements (default a minute). */
  readonly allowanceCheckMs?: number;
  /** The number the call was routed by, when it is not the Request-URI's user (a trunk's DID in To). */
  readonly calledNumber?: string;
  /** The trunks of trunks.yaml, by name (transfers through a trunk). */
  readonly trunk?: (name: string) => TrunkConfig | undefined;
  /** A call we placed: answered already, its media negotiated from our offer and the callee's answer. */
  readonly placed?: PlacedMedia;
  /** A call placed through the API: the key that ordered it, which it is metered for. */
  readonly orderedBy?: { readonly accountId: string; readonly keyId: string };
  /** Variables the call starts with besides its own (an outbound call's, `amd`); the call's own win. */
  readonly variables?: Readonly<Record<string, string>>;
}

/** The media of a call we placed, as the callee's answer (or its early media) made it. */
export interface PlacedMedia {
  /** Our offer: the description a re-offer without SDP is answered with. */
  readonly offer: string;
  readonly media: CallMedia;
  /**
   * For a session on the callee's early media: settles true once the callee answers, false
   * when it never will. Until then listening hears the early media, and every step that speaks
   * or hands the call on waits for the answer. Absent: answered already.
   */
  readonly answered?: Promise<boolean>;
}

/** What keeps voicemails: it stores (and transcribes) a message and names it. */
export interface RecordingSink {
  save(message: NewRecording): Promise<{ readonly id: string }>;
}

/** Caller audio kept for a listen that follows a barge-in (its first words). */
const PREROLL_FRAMES = 50;
/** Keys typed ahead that wait for the next listen; older ones are dropped beyond this. */
const TYPE_AHEAD_KEYS = 32;

/** One call from answer to hangup. */
export class CallSession extends EventEmitter<CallSessionEvents> {
  /** The channel once media is negotiated. */
  private media: MediaChannel | null = null;
  private readonly controller = new AbortController();
  /** Our o= version: goes up whenever our description changes (RFC 3264 section 8). */
  private readonly negotiation: CallNegotiation;
  private answered = false;
  /** The last description we sent (answer, or our offer). */
  private readonly vars: Record<string, string>;
  /** The call's voice and language now: the route's until a `language` step changes it. */
  private voice: CallVoice;
  /** Keys pressed while no listen was running, for the next one (type-ahead). */
  private typedAhead = '';
  private listening = false;
  /** The last transcript's words and confidence (for bots). */
  private lastHeard: StepContext['lastHeard'] = { words: [], confidence: null };
  private readonly logger: Logger;
  private readonly preroll = new FrameRing(PREROLL_FRAMES);
  private ttsSeconds = 0;
  private sttSeconds = 0;
  private readonly startedAt = performance.now();
  private endedReason: string | null = null;

  constructor(
    readonly dialog: SessionDialog,
    private readonly route: LoadedRoute,
    private readonly channel: MediaChannel,
    private readonly services: CallServices,
  ) {
    super();
    this.logger = services.logger.child({ callId: dialog.callId });
    this.negotiation = new CallNegotiation(
      () => ({ address: services.mediaAddress, port: channel.port, preferences: services.codecs }),
      dialog.source.address,
      services.placed?.offer ?? null,
    );
    this.vars = {
      ...services.variables,
      heard: '',
      digits: '',
      caller: dialog.callerUri,
      called: services.calledNumber ?? dialog.calledUser ?? '',
      language: route.language,
    };
    this.voice = {
      language: route.language,
      voice: route.voice,
      ...(route.dialect !== undefined ? { dialect: route.dialect } : {}),
      ...(route.dialect_text ? { dialectText: true } : {}),
    };
    dialog.on('ended', (reason) => this.end(reason));
    dialog.on('reoffer', (offer, reply) => reply(this.reoffer(offer)));
    dialog.on('info', (info) => {
      const key = keyFromInfo(info);
      if (key) this.media?.keyFromSignalling(key);
    });
    channel.on('lost', () => {
      this.logger.error('the call lost its media');
      void this.hangup();
    });
    if (services.placed) {
      this.answered = services.placed.answered === undefined;
      this.media = this.createMedia(services.placed.media);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Runs the route's steps until a hangup, the last step, the turn limit, the caller leaving or
   * the account's entitlements running out; then meters the call.
   */
  async run(): Promise<void> {
    const guard = new CallAllowanceGuard(this.services.metering, this.guardedCall(), this.services.allowanceCheckMs);
    try {
      if (!(await guard.open())) return;
      const end = await runRoute(this.stepContext());
      this.logger.debug({ end }, 'route done');
    } catch (error) {
      if (!this.signal.aborted) this.logger.error({ err: error }, 'call step failed');
    } finally {
      await guard.settle();
      await this.hangup();
      await guard.finish();
    }
  }

  /** The call as its allowance guard sees it. */
  private guardedCall(): GuardedCall {
    return {
      metered: {
        callId: this.dialog.callId,
        routeNumber: this.route.number,
        account: this.route.account,
        synthetic: this.route.engines === 'synthetic',
        ...(this.services.orderedBy ? { orderedBy: this.services.orderedBy } : {}),
      },
      logger: this.logger,
      use: () => ({ ttsSeconds: this.ttsSeconds, sttSeconds: this.sttSeconds }),
      voice: () => this.voice,
      // The steps run on the call's signal; the call itself ends only with its hangup.
      stopSteps: () => this.controller.abort(),
      // The notice plays after the steps were stopped (the call's signal is aborted): only its own
      // signal, which the caller leaving ends, may end it.
      say: (prompt, signal) => this.say(prompt, undefined, signal),
      hangup: (reason) => this.hangup(reason),
      onCallerGone: (listener) => {
        this.dialog.once('ended', listener);
        return () => void this.dialog.off('ended', listener);
      },
    };
  }

  /** The call as its steps see it (dialplan/steps/step-context.ts). */
  private stepContext(): StepContext {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context's accessors read the call's voice and last transcript as they change
    const call = this;
    return {
      route: this.route,
      callId: this.dialog.callId,
      webhookSecret: this.services.webhookSecret,
      signal: this.signal,
      logger: this.logger,
      vars: this.vars,
      get voice(): CallVoice {
        return call.voice;
      },
      set voice(voice: CallVoice) {
        call.voice = voice;
      },
      get lastHeard(): StepContext['lastHeard'] {
        return call.lastHeard;
      },
      now: () => new Date(),
      fill: (text) => fillPlaceholders(text, this.vars),
      answer: () => this.answer(),
      say: (prompt) => this.say(prompt),
      pause: (ms) => abortableDelay(ms, this.signal),
      listen: (request) => this.listen(request),
      record: (request) => this.record(request),
      transfer: (request) => this.transfer(request),
      stream: (request) => this.stream(request),
      hangup: (reason) => this.hangup(reason),
      callerLeft: () => this.endedReason === 'bye' || this.endedReason === 'cancel',
    };
  }

  /**
   * Speaks a prompt to the caller; meters it and reports the turn's latency and a barge-in.
   * `stop` ends it where it is, and so does `callSignal` (the steps' signal unless given), which
   * also stops waiting for its playout.
   */
  private async say(
    prompt: Parameters<StepContext['say']>[0],
    stop?: AbortSignal,
    callSignal: AbortSignal = this.signal,
  ): Promise<{ readonly interrupted: boolean; readonly stopped: boolean; readonly playedSeconds: number }> {
    // A call we placed speaks only once answered: its early media is the callee's.
    if (this.services.placed) await this.answer();
    const media = await this.earlyMedia();
    const started = performance.now();
    const outcome = await speakPrompt(media, this.services.engines, this.route.engines ?? 'live', prompt, callSignal, stop);
    this.ttsSeconds += outcome.synthesisedSeconds;
    const heardLast = outcome.playout?.lastVoiceAtMs ?? 0;
    const firstPacket = outcome.playout?.firstPacketAtMs ?? 0;
    if (heardLast > 0 && firstPacket > 0 && heardLast < started) {
      const turnLatencyMs = firstPacket - heardLast;
      this.logger.info({ turnLatencyMs: Math.round(turnLatencyMs) }, 'turn');
      this.emit('turn-latency', turnLatencyMs);
    }
    if (outcome.interrupted) {
      this.logger.info({ heardSeconds: outcome.playedSeconds }, 'barge-in');
      this.emit('barge-in', outcome.playedSeconds);
    }
    return { interrupted: outcome.interrupted, stopped: outcome.stopped, playedSeconds: outcome.playedSeconds };
  }

  /** Listens for speech and keys; keys typed ahead count first, and what is left waits for the next listen. */
  private async listen(request: ListenRequest): ReturnType<StepContext['listen']> {
    const media = await this.earlyMedia();
    const typedAhead = this.typedAhead;
    this.typedAhead = '';
    this.listening = true;
    try {
      const outcome = await listenForCaller(
        media,
        this.services.engines,
        this.route.engines ?? 'live',
        { ...request, preroll: this.preroll.take(), typedAhead },
        this.signal,
      );
      this.typedAhead = outcome.rest + this.typedAhead;
      this.lastHeard = { words: outcome.words ?? [], confidence: outcome.confidence ?? null };
      this.sttSeconds += outcome.audioSeconds;
      if (outcome.heard) this.emit('transcript', outcome.heard);
      return outcome;
    } finally {
      this.listening = false;
    }
  }

  /** Takes a voicemail and hands it to the recording store; nothing is stored when the caller said nothing. */
  private async record(request: RecordRequest): ReturnType<StepContext['record']> {
    if (this.services.placed) await this.answer();
    const media = await this.earlyMedia();
    // Keys during the message are the finishing key or noise, not type-ahead for a later menu.
    this.listening = true;
    let message: CapturedMessage;
    try {
      message = await captureMessage(media, request, this.signal);
    } finally {
      this.listening = false;
    }
    const seconds = Math.round((message.pcm.length / message.sampleRateHz) * 100) / 100;
    if (!message.spoke || message.endedBy === 'no_input') return { recordingId: null, seconds: 0, endedBy: message.endedBy };
    const saved = await this.services.recordings.save({
      callId: this.dialog.callId,
      route: this.route.number,
      caller: this.vars['caller']!,
      called: this.vars['called']!,
      language: this.voice.language,
      pcm: message.pcm,
      sampleRateHz: message.sampleRateHz,
      endedBy: message.endedBy,
    });
    return { recordingId: saved.id, seconds, endedBy: message.endedBy };
  }

  /**
   * Hands the caller to a person: REFER first (unless the step asks for a bridge), then, when
   * the caller's side refuses REFER and the step allows it, a bridged call.
   */
  private async transfer(request: TransferRequest): ReturnType<StepContext['transfer']> {
    const trunk = request.trunk === undefined ? undefined : this.services.trunk?.(request.trunk);
    const call = { source: this.dialog.source, callerUri: this.dialog.callerUri, called: this.vars['called']!, ourHost: this.services.mediaAddress };
    const addressing = request.trunk !== undefined && !trunk ? { problem: `no trunk ${request.trunk} in trunks.yaml` } : addressTransfer(request, call, trunk);
    if ('problem' in addressing) {
      this.logger.error(addressing.problem);
      return { result: 'failed', status: null };
    }
    // A transfer hands over an answered call (REFER needs a confirmed dialog).
    await this.answer();
    // Through a trunk the gateway places the call: REFER would have the caller's side do it.
    if (request.mode !== 'bridge' && !trunk) {
      const referred = await this.dialog.refer(addressing.target, { headers: addressing.headers }, this.signal);
      this.logger.info({ target: addressing.target, ...referred }, 'refer');
      if (referred.result === 'transferred') {
        await this.hangup('transferred');
        return { result: 'transferred', status: referred.status };
      }
      if (referred.result === 'failed') return failedTransfer(referred.status);
      if (request.mode === 'refer' || this.signal.aborted) return { result: 'refused', status: referred.status };
    }
    const media = await this.earlyMedia();
    return bridgedTransfer(
      { media, place: this.services.placeCall, logger: this.logger, say: (prompt, stop) => this.say(prompt, stop) },
      { ...addressing, headers: addressing.inviteHeaders, ringTimeoutMs: request.ringTimeoutMs },
      request.waiting,
      this.signal,
    );
  }

  /** Hands the answered call to a bot over a WebSocket (call-stream.ts); keys go to the bot, not to a later listen. */
  private async stream(request: StreamRequest): ReturnType<StepContext['stream']> {
    await this.answer();
    const media = await this.earlyMedia();
    this.listening = true;
    try {
      return await streamToBot(
        {
          media,
          engines: this.services.engines,
          choice: this.route.engines ?? 'live',
          logger: this.logger,
          voice: this.voice,
          call: { id: this.dialog.callId, caller: this.vars['caller']!, called: this.vars['called']!, route: this.route.number },
          parameters: request.parameters,
          variables: this.vars,
          speak: (prompt, stop) => this.say(prompt, stop),
          transfer: (transfer) => this.transfer(transfer),
          hangup: (reason) => this.hangup(reason),
          recognised: (seconds) => (this.sttSeconds += seconds),
        },
        request,
        this.signal,
      );
    } finally {
      this.listening = false;
    }
  }

  /** 200 OK with our answer (or offer); resolves once the ACK is in and media flows. */
  private async answer(): Promise<void> {
    if (this.answered) return;
    const placed = this.services.placed;
    if (placed) {
      // The callee answers a call we placed; the steps wait for it (or end with the call).
      if (!(await placed.answered)) throw new Error('the call was not answered');
      this.answered = true;
      return;
    }
    const offer = this.dialog.offer;
    if (offer) {
      const media = this.media ?? this.startMedia(offer);
      if (!media) return;
      this.answered = true;
      await this.dialog.accept({ contentType: SDP, body: Buffer.from(this.negotiation.sent!) });
      return;
    }
    // No offer in the INVITE: ours goes in the 200, the caller's answer comes in the ACK.
    const sdp = this.negotiation.offer();
    this.answered = true;
    const answer = await this.dialog.accept({ contentType: SDP, body: Buffer.from(sdp) });
    if (!answer) throw new SdpError(400, 'the ACK carried no answer to the offer in our 200');
    this.media = this.createMedia(this.negotiation.answered(sdp, answer));
  }

  /** Media before the answer (183 with SDP, early media) when a step needs it. */
  private async earlyMedia(): Promise<MediaChannel> {
    if (this.media) return this.media;
    const offer = this.dialog.offer;
    if (!offer) {
      await this.answer();
      return this.media!;
    }
    const media = this.startMedia(offer);
    if (!media) throw new Error('the offer was refused');
    this.dialog.progress({ contentType: SDP, body: Buffer.from(this.negotiation.sent!) });
    return media;
  }

  /** Answers the INVITE's offer and starts media; refuses the call (488) when it cannot be answered. */
  private startMedia(offer: SessionBody): MediaChannel | null {
    try {
      this.media = this.createMedia(this.negotiation.answer(offer));
      return this.media;
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      this.logger.info({ status: error.status, detail: error.detail }, 'offer refused');
      this.dialog.reject(error.status, [['Warning', `399 sprachrohr "${error.detail.replaceAll('"', "'").slice(0, 120)}"`]]);
      return null;
    }
  }

  private createMedia(media: CallMedia): MediaChannel {
    const channel = this.channel;
    channel.negotiated(media);
    channel.on('dtmf', (key) => {
      this.logger.info({ key }, 'dtmf');
      if (!this.listening) this.typedAhead = (this.typedAhead + key).slice(-TYPE_AHEAD_KEYS);
      this.emit('dtmf', key);
    });
    channel.on('audio', (pcm) => this.preroll.push(pcm));
    // Only the words that start a turn are kept: older audio is not part of it.
    channel.on('speech-start', () => this.preroll.keepLast(15));
    return channel;
  }

  /** A re-INVITE or UPDATE: hold, resume, a codec change or a refresh. */
  private reoffer(offer: SessionBody | null): SessionBody | number {
    if (!this.media) return 491;
    try {
      const outcome = this.negotiation.reoffer(offer, this.media.codec.name);
      if (!('reply' in outcome)) return outcome;
      this.media.negotiated(outcome.media);
      if (outcome.held !== undefined) {
        this.logger.info({ held: outcome.held }, 'hold');
        this.emit('hold', outcome.held);
      }
      if (outcome.codec !== undefined) {
        this.logger.info({ codec: outcome.codec }, 'codec change');
        this.emit('codec-change', outcome.codec);
      }
      return outcome.reply;
    } catch (error) {
      if (error instanceof SdpError) return error.status;
      throw error;
    }
  }

  /** Ends the call from our side (BYE, or 480 while ringing), with a reason for the log and the BYE. */
  async hangup(reason?: string): Promise<void> {
    if (reason !== undefined) this.logger.info({ reason }, 'hanging up');
    if (!this.dialog.ended) await this.dialog.hangup(reason);
    this.end('hangup');
  }

  private end(reason: string): void {
    if (this.endedReason !== null) return;
    this.endedReason = reason;
    this.controller.abort();
    const hadMedia = this.media !== null;
    void this.channel.close().then((quality) => {
      if (hadMedia) this.logger.info(quality, 'call quality');
    });
    const usage: CallUsage = {
      callId: this.dialog.callId,
      route: this.route.number,
      engines: this.route.engines ?? 'live',
      ttsSeconds: Math.round(this.ttsSeconds * 1000) / 1000,
      sttSeconds: Math.round(this.sttSeconds * 1000) / 1000,
      durationSeconds: Math.round((performance.now() - this.startedAt) / 10) / 100,
    };
    this.logger.info({ reason, ...usage }, 'call ended');
    this.emit('usage', usage);
    this.emit('ended', reason);
  }
}

/** A key from an INFO body: `application/dtmf-relay` (`Signal=5`) or `application/dtmf` (`5`). */
export function keyFromInfo(info: SessionBody): string | null {
  const text = info.body.toString('utf8');
  const relay = /^\s*signal\s*=\s*([0-9*#A-Da-d])\s*$/im.exec(text);
  if (info.contentType === 'application/dtmf-relay') return relay ? relay[1]!.toUpperCase() : null;
  if (info.contentType === 'application/dtmf') return /^\s*([0-9*#A-Da-d])\s*$/.test(text) ? text.trim().toUpperCase() : null;
  return null;
}
