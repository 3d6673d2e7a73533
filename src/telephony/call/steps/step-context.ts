/**
 * What a dialplan step may use of the call that runs it, and what it tells the call to do
 * next. Each step kind is one file beside this one; `index.ts` maps the kinds to them.
 */
import type { Logger } from 'pino';
import type { LoadedRoute } from '../../../dialplan/dialplan-loader.js';
import type { DialplanStep } from '../../../dialplan/dialplan-schema.js';
import type { MediaChannel } from '../../media/media-channel.js';
import type { CallServices } from '../call-session.js';

/** The call, as its steps see it. */
export interface StepContext {
  readonly route: LoadedRoute;
  readonly services: CallServices;
  /** Aborted when the call ends. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** `heard`, `digits`, `caller`, `called`: what `{{name}}` placeholders are filled with. */
  readonly vars: Record<string, string>;
  /** Answers the call (200 OK) once; resolves when the ACK is in and media flows. */
  answer(): Promise<void>;
  /** The media, answering with early media (183) when the call is not answered yet. */
  earlyMedia(): Promise<MediaChannel>;
  /** Fills `{{name}}` placeholders; values are escaped inside markup. */
  fill(text: string): string;
  /** The caller's audio kept from just before the step (a barge-in's first words), once. */
  takePreroll(): Int16Array[];
  /** Adds to what the call metered: seconds synthesised and seconds heard. */
  meter(usage: { readonly ttsSeconds?: number; readonly sttSeconds?: number }): void;
  /** Reports a turn's latency, a barge-in and a transcript as the call's events. */
  report(event: { readonly turnLatencyMs: number } | { readonly bargeInHeardSeconds: number } | { readonly transcript: string }): void;
}

/** What the call does after a step. */
export type StepOutcome = { readonly next: 'continue' } | { readonly next: 'goto'; readonly target: string } | { readonly next: 'end' };

/** Go on with the following step. */
export const CONTINUE: StepOutcome = { next: 'continue' };

/** A step of one kind, narrowed from the union by its key. */
export type StepOf<K extends string> = Extract<DialplanStep, Record<K, unknown>>;

/** Runs one step of its kind. */
export type StepRunner<S extends DialplanStep> = (step: S, context: StepContext) => Promise<StepOutcome>;
