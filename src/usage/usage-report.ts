/**
 * The usage report of spec 2.9 / 4.12, made from the ledger's sums: billable audio per
 * direction and mode, sandbox traffic apart (never billed), and optionally a row per day.
 * Audio is metered to the millisecond per entry; billable seconds are each line's audio rounded
 * up to the whole second, with no minimum per request.
 */
import type { UsageKind, UsageSummaryRow } from '../store/store.js';
import { daysOf, type UsageWindow } from './usage-window.js';

/** One direction × mode line of a breakdown (spec 2.9 `window.breakdown[]`). */
export interface UsageBreakdownLine {
  readonly direction: UsageKind['direction'];
  readonly mode: UsageKind['mode'];
  readonly requests: number;
  readonly billable_seconds: number;
  readonly audio_seconds: number;
  /** Always 0: no audio is cached (spec 1). */
  readonly cached_seconds: 0;
}

/** Sandbox traffic of a window: counted, never billed. */
export interface SandboxUsage {
  readonly requests: number;
  readonly audio_seconds: number;
  readonly billed: false;
}

/** One UTC day of a `granularity=day` report. */
export interface UsageDay {
  readonly date: string;
  readonly total_billable_seconds: number;
  readonly breakdown: UsageBreakdownLine[];
  readonly sandbox: SandboxUsage;
}

/** The body of `GET /v1/usage`; `E` is how an entitlement is shown. */
export interface UsageReport<E = unknown> {
  readonly request_id: string;
  readonly unit: 'audio_seconds';
  readonly granularity: 'second';
  readonly minimum_billable_unit: null;
  readonly window: {
    readonly from: string;
    readonly to: string;
    readonly total_billable_seconds: number;
    readonly breakdown: UsageBreakdownLine[];
    readonly sandbox: SandboxUsage;
    readonly days?: UsageDay[];
  };
  readonly entitlements: E[];
}

/** Every line of a breakdown, in this order, traffic or not: the shape never changes. */
const KINDS: readonly UsageKind[] = [
  { direction: 'tts', mode: 'batch' },
  { direction: 'tts', mode: 'realtime' },
  { direction: 'stt', mode: 'batch' },
  { direction: 'stt', mode: 'realtime' },
];

/** Seconds to the millisecond (sums of many entries drift in the last binary digits). */
const milliseconds = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/** Billable whole seconds of a line's audio. */
export const billableSeconds = (audioSeconds: number): number => Math.ceil(milliseconds(audioSeconds));

/** The breakdown, sandbox block and billable total of some summary rows. */
function totalsOf(rows: readonly UsageSummaryRow[]): Pick<UsageDay, 'total_billable_seconds' | 'breakdown' | 'sandbox'> {
  const breakdown = KINDS.map(({ direction, mode }) => {
    const lines = rows.filter((row) => row.environment === 'live' && row.direction === direction && row.mode === mode);
    const audio = milliseconds(lines.reduce((sum, row) => sum + row.audioSeconds, 0));
    return {
      direction,
      mode,
      requests: lines.reduce((sum, row) => sum + row.requests, 0),
      billable_seconds: billableSeconds(audio),
      audio_seconds: audio,
      cached_seconds: 0 as const,
    };
  });
  const sandbox = rows.filter((row) => row.environment === 'sandbox');
  return {
    total_billable_seconds: breakdown.reduce((sum, line) => sum + line.billable_seconds, 0),
    breakdown,
    sandbox: {
      requests: sandbox.reduce((sum, row) => sum + row.requests, 0),
      audio_seconds: milliseconds(sandbox.reduce((sum, row) => sum + row.audioSeconds, 0)),
      billed: false,
    },
  };
}

/** The report of an account's ledger sums over `window`; with `byDay`, a line per UTC day as well. */
export function usageReport<E>(requestId: string, window: UsageWindow, rows: readonly UsageSummaryRow[], byDay: boolean, entitlements: E[]): UsageReport<E> {
  const days = byDay ? daysOf(window).map((date) => ({ date, ...totalsOf(rows.filter((row) => row.day === date)) })) : undefined;
  return {
    request_id: requestId,
    unit: 'audio_seconds',
    granularity: 'second',
    minimum_billable_unit: null,
    window: { from: window.from.toISOString(), to: window.to.toISOString(), ...totalsOf(rows), ...(days ? { days } : {}) },
    entitlements,
  };
}
