/**
 * Entitlements as operators manage them (`sprachrohr entitlements`): free minutes to evaluate
 * (a hard cap), commitments trued up later (never refuse), and prepaid credit (refuses new work
 * when used up, until topped up), each for one direction or both (spec 2.9, 8).
 */
import { KeyManagementError } from '../auth/key-service.js';
import type { EntitlementKind, EntitlementRecord, EntitlementRepository } from '../store/store.js';

/** What an operator asks for when adding an entitlement. */
export interface EntitlementRequest {
  readonly kind: EntitlementKind;
  readonly direction?: EntitlementRecord['direction'];
  readonly seconds?: number;
  readonly credits?: number;
  /** A date (`2026-12-31`: to the end of that day, UTC) or a date-time with offset. */
  readonly validUntil?: string;
  readonly enforcement?: EntitlementRecord['enforcement'];
}

const KINDS: readonly EntitlementKind[] = ['evaluation', 'committed', 'credit'];
const DIRECTIONS: ReadonlyArray<EntitlementRecord['direction']> = ['tts', 'stt', 'any'];

/** The end a `--valid-until` names, ISO 8601 UTC. */
function endOf(text: string): string {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : /T.*(Z|[+-]\d{2}:\d{2})$/.test(text) ? new Date(text) : null;
  if (!date || Number.isNaN(date.getTime()) || (text.length === 10 && date.toISOString().slice(0, 10) !== text)) {
    throw new KeyManagementError(`--valid-until must be a date (2026-12-31) or a date-time with offset, not ${JSON.stringify(text)}`);
  }
  // A date is valid through that day.
  return new Date(date.getTime() + (text.length === 10 ? 86_400_000 : 0)).toISOString();
}

function positive(value: number | undefined, what: string): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0) throw new KeyManagementError(`${what} must be a number above 0`);
  return value;
}

/** Adds, lists, tops up and removes the entitlements of accounts. */
export class EntitlementService {
  constructor(
    private readonly entitlements: EntitlementRepository,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Adds an entitlement to an account (by id). */
  async add(accountId: string, request: EntitlementRequest): Promise<EntitlementRecord> {
    const { kind } = request;
    if (!KINDS.includes(kind)) throw new KeyManagementError(`--kind must be evaluation, committed or credit, not ${JSON.stringify(kind)}`);
    const direction = request.direction ?? 'any';
    if (!DIRECTIONS.includes(direction)) throw new KeyManagementError(`--direction must be tts, stt or any, not ${JSON.stringify(direction)}`);
    if (kind === 'credit' ? request.seconds !== undefined : request.credits !== undefined) {
      throw new KeyManagementError(
        kind === 'credit' ? 'a credit entitlement is granted in --credits, not --seconds' : `a ${kind} entitlement is granted in --seconds, not --credits`,
      );
    }
    const enforcement = request.enforcement ?? (kind === 'committed' ? 'soft' : 'hard');
    if (enforcement !== 'hard' && enforcement !== 'soft')
      throw new KeyManagementError(`--enforcement must be hard or soft, not ${JSON.stringify(enforcement)}`);
    if (kind === 'committed' && enforcement === 'hard')
      throw new KeyManagementError('a committed entitlement is trued up and never refuses: its enforcement is soft');
    const validUntil = request.validUntil === undefined ? null : endOf(request.validUntil);
    if (validUntil !== null && validUntil <= this.now().toISOString()) throw new KeyManagementError(`--valid-until ${request.validUntil} has passed`);
    return this.entitlements.insert({
      accountId,
      kind,
      direction,
      grantedSeconds: kind === 'credit' ? null : positive(request.seconds, '--seconds'),
      grantedCredits: kind === 'credit' ? positive(request.credits, '--credits') : null,
      validUntil,
      enforcement,
      createdAt: this.now().toISOString(),
    });
  }

  /** The account's entitlements, oldest first. */
  list(accountId: string): Promise<EntitlementRecord[]> {
    return this.entitlements.list(accountId);
  }

  /** Adds credits to a credit entitlement. */
  async topUp(id: number, credits: number): Promise<EntitlementRecord> {
    const entitlement = await this.byId(id);
    if (entitlement.kind !== 'credit')
      throw new KeyManagementError(`entitlement #${id} is ${entitlement.kind}; only credit is topped up (add another entitlement instead)`);
    await this.entitlements.topUp(id, positive(credits, '--credits'));
    return this.byId(id);
  }

  /** Removes an entitlement: it is no longer drawn from or shown. */
  async remove(id: number): Promise<EntitlementRecord> {
    const entitlement = await this.byId(id);
    await this.entitlements.remove(id);
    return entitlement;
  }

  private async byId(id: number): Promise<EntitlementRecord> {
    const entitlement = Number.isSafeInteger(id) ? await this.entitlements.findById(id) : undefined;
    if (!entitlement) throw new KeyManagementError(`no entitlement #${id}; see sprachrohr entitlements list --account NAME`);
    return entitlement;
  }
}
