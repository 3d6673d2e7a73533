/**
 * What a dialplan step may ask of the call that runs it, and what it tells the call to do next.
 * A phone call (telephony/call/call-session.ts) and a simulated one (`sprachrohr dialplan
 * simulate`) both implement it, so the steps are one piece of code for both. Each step kind is
 * one file beside this one; `index.ts` maps the kinds to them.
 */
import type { Logger } from 'pino';
import type { LoadedRoute } from '../dialplan-loader.js';
import type { DialplanStep } from '../dialplan-schema.js';

/** The voice the call speaks with, and the language it listens in. */
export interface CallVoice {
  readonly language: string;
  readonly voice: string;
  readonly dialect?: string;
  /** Prompts are written in the Swiss German dialect already (`dialect_text`): pronounced, not rendered. */
  readonly dialectText?: boolean;
}

/** A prompt to speak. */
export interface PromptRequest extends CallVoice {
  readonly text: string;
  /** Caller speech or a key stops it. */
  readonly bargeIn: boolean;
}

/** How a prompt ended. */
export interface SpokenPrompt {
  /** The caller spoke or pressed a key during it. */
  readonly interrupted: boolean;
}

/** What to listen for. */
export interface ListenRequest {
  readonly speech: boolean;
  readonly dtmf: boolean;
  readonly language: string;
  readonly vocabulary: readonly string[];
  /** No speech or key for this long ends the listening. */
  readonly timeoutMs: number;
  readonly maxMs: number;
  /** Keys that end the listening. */
  readonly maxDigits: number;
  /** Silence that ends the caller's turn (the listen default when absent). */
  readonly endSilenceMs?: number;
  /** A key that ends the entry at once; it is not part of the digits. */
  readonly finishOnKey?: string;
  /** After a key, no further key for this long ends the listening. */
  readonly interDigitTimeoutMs?: number;
}

/** A word the recogniser heard: its time in the caller's turn (seconds) and how sure it is (0 to 1). */
export interface HeardWord {
  readonly word: string;
  readonly start: number;
  readonly end: number;
  readonly confidence: number;
}

/** What a listen heard. */
export interface ListenOutcome {
  /** The final transcript, or '' when nothing was understood. */
  readonly heard: string;
  /** The transcript's words (none without a transcript, or where no recogniser timed them: a simulation). */
  readonly words?: readonly HeardWord[];
  /** The recogniser's confidence in the transcript (duration-weighted over its words); null without one. */
  readonly confidence?: number | null;
  /** The keys pressed (without a finishing key). */
  readonly digits: string;
  /** `finished`: the finishing key was pressed; `busy`: no recogniser was free and keys were not asked for. */
  readonly reason: 'speech' | 'digits' | 'finished' | 'timeout' | 'max' | 'ended' | 'busy';
  /** Speech was asked for but no recogniser was free. */
  readonly recogniserBusy: boolean;
  /** Seconds of caller audio the recogniser heard. */
  readonly audioSeconds: number;
}

/** A voicemail to take. */
export interface RecordRequest {
  readonly beep: boolean;
  readonly maxSeconds: number;
  readonly endSilenceMs: number;
  readonly timeoutMs: number;
  readonly finishOnKey: string;
}

/** A taken voicemail. */
export interface RecordOutcome {
  /** The stored recording's id, or null when the caller said nothing. */
  readonly recordingId: string | null;
  readonly seconds: number;
  readonly endedBy: 'silence' | 'key' | 'max_length' | 'hangup' | 'no_input';
}

/** A handover to a person. */
export interface TransferRequest {
  /** A SIP URI, or a number. */
  readonly target: string;
  readonly mode: 'auto' | 'refer' | 'bridge';
  /** The trunk of trunks.yaml the bridged call goes through (a transfer through a trunk is always bridged). */
  readonly trunk?: string;
  readonly callerId?: string;
  readonly diversion: boolean;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly ringTimeoutMs: number;
  /** `ringback`, or a prompt said while the target rings. */
  readonly waiting: 'ringback' | PromptRequest;
}

/**
 * How a transfer ended. `transferred` (REFER accepted and the target answered) and `bridged`
 * (the bridged call ended) end the call; the others go on with the step's `on_fail`.
 */
export interface TransferOutcome {
  readonly result: 'transferred' | 'bridged' | 'busy' | 'no_answer' | 'refused' | 'failed';
  /** The SIP status behind a failure, when there was one. */
  readonly status: number | null;
}

/** A bot to hand the call to over a WebSocket (the `stream` step). */
export interface StreamRequest {
  readonly url: string;
  readonly mode: 'media' | 'text';
  /** Sent at the start (Twilio: customParameters), placeholders filled. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Signs the connection request; null: unsigned. */
  readonly secret: string | null;
  readonly connectTimeoutMs: number;
}

/**
 * How a stream ended: `closed` (the bot closed the socket normally: the dialplan goes on),
 * `ended` (the call ended: the caller hung up, or the bot transferred or hung up), `failed`
 * (the bot could not be reached, or failed mid-call: why in `reason`).
 */
export interface StreamOutcome {
  readonly result: 'closed' | 'ended' | 'failed';
  readonly reason: string;
}

/** The call, as its steps see it. */
export interface StepContext {
  readonly route: LoadedRoute;
  /** The call's id (the SIP Call-ID), for bots and logs. */
  readonly callId: string;
  /** The deployment's webhook secret, which signs a webhook bot's requests; null: unsigned. */
  readonly webhookSecret: string | null;
  /** Aborted when the call ends. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** `heard`, `digits`, `caller`, `called`, `language` and whatever `set` set: what `{{name}}` placeholders are filled with. */
  readonly vars: Record<string, string>;
  /** The call's voice and language now (the route's until a `language` step changes it). */
  voice: CallVoice;
  /** The last transcript's words and confidence, kept by the call after each listen (for bots). */
  readonly lastHeard: { readonly words: readonly HeardWord[]; readonly confidence: number | null };
  /** The time of day the call sees (a fixed one in a simulation). */
  now(): Date;
  /** Fills `{{name}}` placeholders; values are escaped inside markup. */
  fill(text: string): string;
  /** Answers the call (200 OK) once; resolves when the ACK is in and media flows. */
  answer(): Promise<void>;
  /** Speaks a prompt (as early media when the call is not answered yet). */
  say(prompt: PromptRequest): Promise<SpokenPrompt>;
  /** Lets time pass in silence (ended early when the call ends). */
  pause(ms: number): Promise<void>;
  /** Listens for the caller's speech and/or keys; keys pressed since the last listen come first. */
  listen(request: ListenRequest): Promise<ListenOutcome>;
  /** Takes a voicemail, stores it and returns its id. */
  record(request: RecordRequest): Promise<RecordOutcome>;
  /** Hands the caller to a person. */
  transfer(request: TransferRequest): Promise<TransferOutcome>;
  /** Hands the call to a bot over a WebSocket until the bot closes it, fails, or the call ends (answers the call first). */
  stream(request: StreamRequest): Promise<StreamOutcome>;
  /** Ends the call from our side, with a reason for the log and the BYE. */
  hangup(reason?: string): Promise<void>;
  /** Whether the call ended because the caller hung up (rather than by a step or a transfer). */
  callerLeft(): boolean;
}

/** What the call does after a step. */
export type StepOutcome = { readonly next: 'continue' } | { readonly next: 'goto'; readonly target: string } | { readonly next: 'end' };

/** Go on with the following step. */
export const CONTINUE: StepOutcome = { next: 'continue' };

/** Go on with the step of this id, or with the next one when there is none. */
export function goOn(target: string | undefined): StepOutcome {
  return target === undefined ? CONTINUE : { next: 'goto', target };
}

export type { StepOf } from '../step-kinds.js';

/** Runs one step of its kind. */
export type StepRunner<S extends DialplanStep> = (step: S, context: StepContext) => Promise<StepOutcome>;
