/**
 * The rows both stores keep, as their SQL columns, and how a row becomes a record. JSON columns
 * arrive as text from SQLite and already parsed from PostgreSQL (jsonb); {@link fromJson}
 * takes either.
 */
import type { AccountRecord, ApiKeyRecord, EntitlementRecord, Environment, JobAudio, JobRecord, JobTranscript, LedgerEntry, UsageSummaryRow } from './store.js';

/** A JSON column's value: the text SQLite keeps, or the value PostgreSQL's jsonb gives. */
export type JsonColumn<T> = string | T;

/** A JSON column's value as the value it holds (null stays null). */
export function fromJson<T>(value: JsonColumn<T> | null): T | null {
  if (value === null) return null;
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

export interface AccountRow {
  id: string;
  name: string;
  created_at: string;
  webhook_secret: string;
  emails: JsonColumn<string[]>;
}

export function accountFromRow(row: AccountRow): AccountRecord {
  return { id: row.id, name: row.name, createdAt: row.created_at, webhookSecret: row.webhook_secret, emails: fromJson(row.emails) ?? [] };
}

export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  environment: Environment;
  fingerprint: string;
  display_prefix: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  replaced_by: string | null;
}

export function keyFromRow(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    environment: row.environment,
    fingerprint: row.fingerprint,
    displayPrefix: row.display_prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    replacedBy: row.replaced_by,
  };
}

export interface LedgerRow {
  request_id: string;
  account_id: string;
  key_id: string;
  environment: LedgerEntry['environment'];
  direction: LedgerEntry['direction'];
  mode: LedgerEntry['mode'];
  recorded_at: string;
  audio_seconds: number;
}

export function ledgerFromRow(row: LedgerRow): LedgerEntry {
  return {
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    environment: row.environment,
    direction: row.direction,
    mode: row.mode,
    recordedAt: row.recorded_at,
    audioSeconds: row.audio_seconds,
  };
}

export interface SummaryRow {
  day: string;
  environment: UsageSummaryRow['environment'];
  direction: UsageSummaryRow['direction'];
  mode: UsageSummaryRow['mode'];
  requests: number;
  audio_seconds: number;
}

export function summaryFromRow(row: SummaryRow): UsageSummaryRow {
  return { day: row.day, environment: row.environment, direction: row.direction, mode: row.mode, requests: row.requests, audioSeconds: row.audio_seconds };
}

export interface EntitlementRow {
  id: number;
  account_id: string;
  kind: EntitlementRecord['kind'];
  direction: EntitlementRecord['direction'];
  granted_seconds: number | null;
  granted_credits: number | null;
  used: number;
  valid_until: string | null;
  enforcement: EntitlementRecord['enforcement'];
  created_at: string;
  notices_sent: JsonColumn<number[]>;
}

export function entitlementFromRow(row: EntitlementRow): EntitlementRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    direction: row.direction,
    grantedSeconds: row.granted_seconds,
    grantedCredits: row.granted_credits,
    used: row.used,
    validUntil: row.valid_until,
    enforcement: row.enforcement,
    createdAt: row.created_at,
    noticesSent: fromJson(row.notices_sent) ?? [],
  };
}

export interface JobRow {
  id: string;
  account_id: string;
  key_id: string;
  environment: Environment;
  kind: JobRecord['kind'];
  status: JobRecord['status'];
  request: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  audio: JsonColumn<JobAudio> | null;
  result_expires_at: string | null;
  purged_at: string | null;
  error: JsonColumn<NonNullable<JobRecord['error']>> | null;
  attempts: number;
  callback_url: string | null;
  callback_delivered_at: string | null;
  callback_attempts: number;
  callback_error: string | null;
  transcript: JsonColumn<JobTranscript> | null;
}

export function jobFromRow(row: JobRow): JobRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    environment: row.environment,
    kind: row.kind,
    status: row.status,
    request: row.request,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    audio: fromJson(row.audio),
    resultExpiresAt: row.result_expires_at,
    purgedAt: row.purged_at,
    error: fromJson(row.error),
    attempts: row.attempts,
    callbackUrl: row.callback_url,
    callback: { deliveredAt: row.callback_delivered_at, attempts: row.callback_attempts, error: row.callback_error },
    transcript: fromJson(row.transcript),
  };
}
