/**
 * What `POST /v1/calls` asks for, and why such a request may be refused: the problems a caller
 * can fix (`invalid`), a call that cannot go out now (`unavailable`: calls are off, or the trunk
 * is down), and limits (`key_limit` for the key's calls per second or at once, `capacity` for
 * the trunk's `max_calls` or `SPRACHROHR_SIP_MAX_CALLS`), the last two with the seconds to wait.
 */
import type { DialplanStep } from '../../dialplan/dialplan-schema.js';
import type { MachineDetectionMode } from './machine-detection.js';

/** An outbound call as ordered through the API (its shape checked by the schema). */
export interface CallOrder {
  /** An E.164 number (`+41441234567`, needs a trunk) or a SIP URI. */
  readonly to: string;
  /** The caller ID: an E.164 number or a SIP URI; by default the trunk's `caller_id` (or `from_user`). */
  readonly from?: string;
  /** The trunk of trunks.yaml the call goes through. */
  readonly trunk?: string;
  /** A dialplan file of the dialplans folder (`reminder` or `reminder.yaml`)… */
  readonly dialplan?: string;
  /** …and the number of its route to run (default: its first). */
  readonly route?: string;
  /** Or a bot: one `webhook` or `stream` step, as a dialplan would write it. */
  readonly bot?: DialplanStep;
  /** The bot call's language and voice (default de-CH, anna). */
  readonly language?: string;
  readonly voice?: string;
  /** The route's `{{variables}}`. */
  readonly variables?: Readonly<Record<string, string>>;
  /** How long it may ring (default 30 s). */
  readonly ring_timeout_s?: number;
  readonly machine_detection?: MachineDetectionMode;
  /**
   * Start the route on the callee's early media (183 with SDP), before the answer: its listen
   * steps hear what the network plays ("kein Anschluss unter dieser Nummer"); steps that speak
   * wait for the answer. The route ends when the call is not answered.
   */
  readonly listen_early_media?: boolean;
  /** Where status events are POSTed, signed like job callbacks. */
  readonly status_url?: string;
}

/** Who ordered a call: its key and account. */
export interface CallOwner {
  readonly keyId: string;
  readonly accountId: string;
}

/** Why a call order was refused. */
export type CallOrderProblem = 'invalid' | 'unavailable' | 'key_limit' | 'capacity';

/** A call order that was refused, with a detail fit for the error envelope. */
export class CallOrderError extends Error {
  override readonly name = 'CallOrderError';

  constructor(
    readonly problem: CallOrderProblem,
    detail: string,
    /** Seconds to wait before trying again (limits). */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
  }
}

/** An E.164 number: + and up to 15 digits, not starting with 0. */
export const E164 = /^\+[1-9][0-9]{6,14}$/;
