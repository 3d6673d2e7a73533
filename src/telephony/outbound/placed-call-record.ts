/**
 * One outbound call as the API reports it: queued until the INVITE goes, ringing from the first
 * 180/183, answered with the callee's 200, then completed; or failed, with the SIP status and
 * a cause. Timestamps are ISO 8601; the duration counts from the answer.
 */
import type { AmdOutcomeView } from './machine-detection.js';

/** Where a call stands. */
export type PlacedCallState = 'queued' | 'ringing' | 'answered' | 'completed' | 'failed';

/**
 * Why a call failed: `busy` (486, 600), `declined` (603), `no_answer` (the ring timeout passed,
 * or 408/480/487), `unreachable` (nothing answered the INVITE), `rejected` (another final
 * status), `cancelled` (hung up through the API while it rang, or the gateway stopped),
 * `media` (no RTP port free, or an answer with media we cannot take).
 */
export type PlacedCallCause = 'busy' | 'declined' | 'no_answer' | 'unreachable' | 'rejected' | 'cancelled' | 'media';

/** Who ended an answered call. */
export type CallEnder = 'callee' | 'gateway' | 'api';

/** What the gateway keeps of one outbound call. */
export interface PlacedCallRecord {
  readonly id: string;
  readonly keyId: string;
  readonly accountId: string;
  readonly to: string;
  readonly from: string;
  readonly trunk: string | null;
  /** The Request-URI of the INVITE. */
  readonly target: string;
  /** What runs once answered: a dialplan file's route, or a bot. */
  readonly runs: { readonly dialplan: string; readonly route: string } | { readonly bot: 'webhook' | 'stream' };
  state: PlacedCallState;
  /** The final SIP status of the INVITE (200 once answered), null before. */
  sipStatus: number | null;
  cause: PlacedCallCause | null;
  /** The INVITE's Call-ID, once it is sent. */
  sipCallId: string | null;
  earlyMedia: boolean;
  amd: AmdOutcomeView | null;
  endedBy: CallEnder | null;
  readonly createdAt: Date;
  ringingAt: Date | null;
  answeredAt: Date | null;
  endedAt: Date | null;
}

/** The call as `GET /v1/calls/{id}` shows it. */
export interface PlacedCallView {
  readonly id: string;
  readonly state: PlacedCallState;
  readonly to: string;
  readonly from: string;
  readonly trunk: string | null;
  readonly dialplan: string | null;
  readonly route: string | null;
  readonly bot: 'webhook' | 'stream' | null;
  readonly sip_status: number | null;
  readonly cause: PlacedCallCause | null;
  readonly sip_call_id: string | null;
  readonly early_media: boolean;
  readonly amd: AmdOutcomeView | null;
  readonly ended_by: CallEnder | null;
  readonly created_at: string;
  readonly ringing_at: string | null;
  readonly answered_at: string | null;
  readonly ended_at: string | null;
  /** Seconds from the answer to the end (to now while it is up); null when never answered. */
  readonly duration_s: number | null;
}

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** The API's view of a call at `now`. */
export function placedCallView(call: PlacedCallRecord, now: Date = new Date()): PlacedCallView {
  const runs = call.runs;
  const answeredMs = call.answeredAt?.getTime() ?? null;
  return {
    id: call.id,
    state: call.state,
    to: call.to,
    from: call.from,
    trunk: call.trunk,
    dialplan: 'dialplan' in runs ? runs.dialplan : null,
    route: 'dialplan' in runs ? runs.route : null,
    bot: 'bot' in runs ? runs.bot : null,
    sip_status: call.sipStatus,
    cause: call.cause,
    sip_call_id: call.sipCallId,
    early_media: call.earlyMedia,
    amd: call.amd,
    ended_by: call.endedBy,
    created_at: call.createdAt.toISOString(),
    ringing_at: iso(call.ringingAt),
    answered_at: iso(call.answeredAt),
    ended_at: iso(call.endedAt),
    duration_s: answeredMs === null ? null : Math.round(((call.endedAt ?? now).getTime() - answeredMs) / 100) / 10,
  };
}

/** The cause of a call that was not answered, from how placing it ended. */
export function causeOf(failed: number | 'timeout' | 'cancelled' | 'unreachable' | 'unsupported'): PlacedCallCause {
  if (failed === 486 || failed === 600) return 'busy';
  if (failed === 603) return 'declined';
  if (failed === 'timeout' || failed === 408 || failed === 480 || failed === 487) return 'no_answer';
  if (failed === 'unreachable') return 'unreachable';
  if (failed === 'cancelled') return 'cancelled';
  if (failed === 'unsupported' || failed === 488) return 'media';
  return 'rejected';
}
