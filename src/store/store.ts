/**
 * Persistence behind one interface, so that the embedded SQLite store and a PostgreSQL store
 * are interchangeable. Methods are asynchronous for the sake of network-backed stores.
 */
import type { BlobArea, BlobStore } from './blob-store.js';
import type { BudgetClaims } from './budget-claims.js';
import type { LimitCounters } from './limit-counters.js';

/** Where a key acts: billed production traffic or the synthetic sandbox. */
export type Environment = 'live' | 'sandbox';

/**
 * A customer of the deployment: its keys, and (as they are built) its entitlements, usage and
 * job callbacks belong to it. Keys made before accounts existed belong to the `default` one.
 */
export interface AccountRecord {
  readonly id: string;
  /** The operator's name for it, unique: what the CLI takes. */
  readonly name: string;
  readonly createdAt: string;
  /** Signs the account's job callbacks (spec 6.3); shown to its operator, rotatable. */
  readonly webhookSecret: string;
  /** Where the account's notices go. */
  readonly emails: readonly string[];
}

/** Fields of an account that change after creation. */
export type AccountChanges = Partial<Pick<AccountRecord, 'webhookSecret' | 'emails'>>;

/** Accounts by id and by name. */
export interface AccountRepository {
  insert(record: AccountRecord): Promise<void>;
  findById(id: string): Promise<AccountRecord | undefined>;
  findByName(name: string): Promise<AccountRecord | undefined>;
  /** All accounts, oldest first. */
  list(): Promise<AccountRecord[]>;
  update(id: string, changes: AccountChanges): Promise<void>;
}

/** The id of the account that keys made without one belong to. */
export const DEFAULT_ACCOUNT_ID = 'acct_default';

/** An API key as stored: never the key itself, only its keyed fingerprint. */
export interface ApiKeyRecord {
  readonly id: string;
  /** The account the key acts for. */
  readonly accountId: string;
  readonly name: string;
  readonly environment: Environment;
  /** HMAC-SHA256 of the key under the deployment's key secret, hex. */
  readonly fingerprint: string;
  /** The first characters of the key, to recognise it in listings. */
  readonly displayPrefix: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  /** Set when a rotation superseded the key: the moment it stops working. */
  readonly expiresAt: string | null;
  /** The key that replaced this one in a rotation. */
  readonly replacedBy: string | null;
}

/** Fields of a key that change after creation. */
export type ApiKeyChanges = Partial<Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt' | 'replacedBy'>>;

/** Keys by id and by fingerprint. */
export interface KeyRepository {
  insert(record: ApiKeyRecord): Promise<void>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  findByFingerprint(fingerprint: string): Promise<ApiKeyRecord | undefined>;
  /** All keys, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  update(id: string, changes: ApiKeyChanges): Promise<void>;
}

/** Direction and mode of metered traffic (spec 2.9 breakdown). */
export interface UsageKind {
  readonly direction: 'tts' | 'stt';
  readonly mode: 'batch' | 'realtime';
}

/**
 * One finished piece of metered work in the ledger: a request, a job, a realtime session or a
 * phone call. Written once: a second entry under the same request id is ignored.
 */
export interface LedgerEntry extends UsageKind {
  /** The work's request id (HTTP request, job, session or call): what makes the entry unique. */
  readonly requestId: string;
  readonly accountId: string;
  readonly keyId: string;
  readonly environment: Environment;
  /** When the work finished, ISO 8601 UTC: its day is the day it counts on. */
  readonly recordedAt: string;
  readonly audioSeconds: number;
}

/** Totals of one key on one day. */
export interface UsageTotals {
  readonly requests: number;
  readonly audioSeconds: number;
}

/** An account's use on one UTC day in one environment, direction and mode. */
export interface UsageSummaryRow extends UsageKind, UsageTotals {
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly environment: Environment;
}

/** What an entitlement allows: free minutes, a commitment trued up later, or prepaid credit (spec 2.9). */
export type EntitlementKind = 'evaluation' | 'committed' | 'credit';

/** An allowance of an account (spec 2.9 `entitlements[]`, 8). */
export interface EntitlementRecord {
  readonly id: number;
  readonly accountId: string;
  readonly kind: EntitlementKind;
  readonly direction: UsageKind['direction'] | 'any';
  /** Seconds granted (evaluation, committed); null for credit. */
  readonly grantedSeconds: number | null;
  /** Credits granted, top-ups included (credit); null otherwise. */
  readonly grantedCredits: number | null;
  /** Seconds drawn (evaluation, committed), credits drawn (credit). */
  readonly used: number;
  /** ISO 8601 UTC; null: no end. */
  readonly validUntil: string | null;
  /** `hard`: refuses when used up; `soft`: never refuses, only notices. */
  readonly enforcement: 'hard' | 'soft';
  readonly createdAt: string;
  /** Which used-share notices (80, 95 per cent) have gone out. */
  readonly noticesSent: readonly number[];
}

/** An entitlement to add; id, use and notices are the store's. */
export type NewEntitlement = Omit<EntitlementRecord, 'id' | 'used' | 'noticesSent'>;

/** Credits one audio second costs, per direction. */
export interface CreditRates {
  readonly tts: number;
  readonly stt: number;
}

/** An entitlement whose use crossed a notice threshold with a ledger entry: a notice is due. */
export interface EntitlementNotice {
  readonly entitlement: EntitlementRecord;
  /** The threshold crossed, per cent used (80 or 95). */
  readonly percent: number;
}

/** An account's entitlements. */
export interface EntitlementRepository {
  insert(entitlement: NewEntitlement): Promise<EntitlementRecord>;
  findById(id: number): Promise<EntitlementRecord | undefined>;
  /** The account's entitlements that were not removed, oldest first. */
  list(accountId: string): Promise<EntitlementRecord[]>;
  /** Adds credits to a credit entitlement's grant. */
  topUp(id: number, credits: number): Promise<void>;
  /** Removes an entitlement (its draws stay in the ledger's history); false when there was none. */
  remove(id: number): Promise<boolean>;
}

/** What writing a ledger entry did. */
export interface RecordOutcome {
  /** False when an entry with that request id was there already: nothing changed. */
  readonly recorded: boolean;
  /** Notices that became due with it (each goes out once: the store marks it sent). */
  readonly notices: readonly EntitlementNotice[];
}

/** The metering ledger, with each key's totals per day kept beside it. */
export interface UsageRepository {
  /**
   * Writes a ledger entry, adds it to its key's day totals and, for live traffic, draws it from
   * the account's entitlements (in the order of `planDraws`), all or nothing.
   */
  record(entry: LedgerEntry, rates: CreditRates): Promise<RecordOutcome>;
  /** What a key used on one day in one direction (all modes). */
  dayTotals(keyId: string, day: string, direction: UsageKind['direction']): Promise<UsageTotals>;
  /** An account's entries from `from` (inclusive) to `to` (exclusive), ISO 8601 UTC, summed per day, environment, direction and mode; ordered by day. */
  summary(accountId: string, from: string, to: string): Promise<UsageSummaryRow[]>;
  /** The entry recorded under a request id, if any. */
  findByRequestId(requestId: string): Promise<LedgerEntry | undefined>;
}

/** How a caller's message ended: a pause, the finishing key, the length limit, or the hang-up. */
export type RecordingEnd = 'silence' | 'key' | 'max_length' | 'hangup';

/** Where a recording's transcription stands. */
export type TranscriptStatus = 'pending' | 'done' | 'unavailable' | 'failed';

/** A recording's transcript: text and confidence once `done`, null before and otherwise. */
export interface RecordingTranscript {
  readonly status: TranscriptStatus;
  readonly text: string | null;
  /** Duration-weighted word confidence in [0, 1]; null when no word was heard. */
  readonly confidence: number | null;
}

/** A voicemail as indexed: its audio is a WAV file named by its id. */
export interface RecordingRecord {
  readonly id: string;
  readonly callId: string;
  /** The dialplan route (the called number) that recorded it. */
  readonly route: string;
  readonly caller: string;
  readonly called: string;
  readonly language: string;
  readonly createdAt: string;
  readonly durationSeconds: number;
  /** Size of the WAV file, header included. */
  readonly sizeBytes: number;
  readonly sampleRateHz: number;
  readonly endedBy: RecordingEnd;
  readonly transcript: RecordingTranscript;
}

/** A place in the newest-first order of recordings: a page continues below it. */
export interface RecordingPosition {
  readonly createdAt: string;
  readonly id: string;
}

/** The index of recordings. */
export interface RecordingRepository {
  insert(record: RecordingRecord): Promise<void>;
  findById(id: string): Promise<RecordingRecord | undefined>;
  /** Up to `limit` recordings, newest first (ties by id), older than `before` when given. */
  page(limit: number, before?: RecordingPosition): Promise<RecordingRecord[]>;
  setTranscript(id: string, transcript: RecordingTranscript): Promise<void>;
  /** Removes a recording's entry; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Ids of up to `limit` recordings created at or before `cutoff`, oldest first. */
  createdUpTo(cutoff: string, limit: number): Promise<string[]>;
  /** Every recording whose transcript has the status, oldest first. */
  withTranscriptStatus(status: TranscriptStatus): Promise<RecordingRecord[]>;
}

/** Where a job stands (spec 3). */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** The audio a succeeded job made: a file named by the job's id. */
export interface JobAudio {
  readonly encoding: string;
  readonly mediaType: string;
  readonly sampleRateHz: number;
  readonly byteLength: number;
  readonly seconds: number;
}

/** An asynchronous synthesis (spec 2.6) as stored. */
export interface JobRecord {
  readonly id: string;
  readonly accountId: string;
  readonly keyId: string;
  readonly environment: Environment;
  /** `tts`: a synthesis; `stt`: a recognition of an uploaded recording (kept beside the job until it ran). */
  readonly kind: 'tts' | 'stt';
  readonly status: JobStatus;
  /** The request as submitted (checked then), JSON: a synthesis request, or a recognition's `lang` and `vocabulary`. */
  readonly request: string;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly audio: JobAudio | null;
  /** When the result is removed: 48 hours after the job finished. */
  readonly resultExpiresAt: string | null;
  /** Set once the audio file has been removed after expiry. */
  readonly purgedAt: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** Times the job was started (a job running when its process died is started again). */
  readonly attempts: number;
  /** Where its completion is POSTed (spec 6.3); null: no callback. */
  readonly callbackUrl: string | null;
  /** How the callback fared (spec 2.6 `callback`). */
  readonly callback: JobCallbackState;
  /** A finished recognition job's transcript (spec 2.3). */
  readonly transcript: JobTranscript | null;
}

/** The transcript of a recognition job, as `POST /v1/stt` answers it. */
export interface JobTranscript {
  readonly text: string;
  readonly lang: string;
  readonly words: ReadonlyArray<{ readonly w: string; readonly start: number; readonly end: number; readonly conf: number }>;
  readonly duration_s: number;
}

/** A job callback's delivery so far. */
export interface JobCallbackState {
  readonly deliveredAt: string | null;
  readonly attempts: number;
  readonly error: string | null;
}

/** How a job ended. */
export interface JobOutcome {
  readonly status: 'succeeded' | 'failed';
  readonly finishedAt: string;
  readonly resultExpiresAt: string;
  readonly audio: JobAudio | null;
  readonly transcript?: JobTranscript | null;
  readonly error: JobRecord['error'];
}

/** A place in the newest-first order of jobs. */
export interface JobPosition {
  readonly createdAt: string;
  readonly id: string;
}

/** The jobs of a deployment and their queue. */
export interface JobRepository {
  insert(job: JobRecord): Promise<void>;
  findById(id: string): Promise<JobRecord | undefined>;
  /** An account's jobs in one environment, newest first. */
  list(accountId: string, environment: Environment, limit: number): Promise<JobRecord[]>;
  /** Jobs of a key waiting in the queue. */
  queuedOf(keyId: string): Promise<number>;
  /** Takes the oldest queued job for running (queued → running, attempts + 1), or none; no two callers get the same job. */
  claim(startedAt: string): Promise<JobRecord | undefined>;
  /** Ends a running job. */
  finish(id: string, outcome: JobOutcome): Promise<void>;
  /** Puts every running job back in the queue (their process died); returns how many. */
  requeueRunning(): Promise<number>;
  /**
   * Puts back in the queue the running jobs whose runner is gone while other runners go on (an
   * instance on a shared store died mid-job); returns how many. A store whose jobs only one
   * process runs has none such: its start puts back what was running.
   */
  requeueOrphaned(): Promise<number>;
  /** Ids of jobs whose result expired at or before `now` and whose audio is still kept, oldest first. */
  expired(now: string, limit: number): Promise<string[]>;
  markPurged(id: string, at: string): Promise<void>;
  /** Writes how a job's callback fared. */
  recordCallback(id: string, state: JobCallbackState): Promise<void>;
  /** Finished jobs whose callback is neither delivered nor given up (fewer than `maxAttempts`), oldest first. */
  pendingCallbacks(maxAttempts: number, limit: number): Promise<JobRecord[]>;
}

/** The persistence of one deployment. */
export interface Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;
  readonly entitlements: EntitlementRepository;
  readonly recordings: RecordingRepository;
  readonly jobs: JobRepository;
  /** The counters of the per-key limits: this process's with the embedded store, the deployment's with PostgreSQL. */
  readonly limits: LimitCounters;
  /**
   * Where instances claim the parts of daily budgets their work in progress may draw; null
   * where one process is the only instance (the embedded store).
   */
  readonly budgetClaims: BudgetClaims | null;
  /**
   * The bytes of one area: files in `folder` with the embedded store, rows of the shared
   * database with PostgreSQL (which ignores `folder`).
   */
  blobs(area: BlobArea, folder: string): BlobStore;
  close(): Promise<void>;
}
