/**
 * What every store must do, whatever it keeps its data in: the same suite runs against the
 * embedded SQLite store and the PostgreSQL store, so that a deployment can move from one to
 * the other and see no difference in behaviour.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord, JobRecord, LedgerEntry, RecordingRecord, Store } from '../../src/store/store.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';

/** Opens an empty store of the kind under test (each call a fresh one). */
export type OpenStore = () => Promise<Store>;

const RATES = { tts: 2, stt: 1 };

function key(id: string, fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id,
    accountId: DEFAULT_ACCOUNT_ID,
    name: `key ${id}`,
    environment: 'live',
    fingerprint: `fp-${id}`,
    displayPrefix: `sk_live_${id}`,
    createdAt: '2026-11-01T10:00:00.000Z',
    revokedAt: null,
    expiresAt: null,
    replacedBy: null,
    ...fields,
  };
}

function entry(requestId: string, fields: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    requestId,
    accountId: DEFAULT_ACCOUNT_ID,
    keyId: 'key_a',
    environment: 'live',
    direction: 'tts',
    mode: 'batch',
    recordedAt: '2026-11-20T12:00:00.000Z',
    audioSeconds: 10,
    ...fields,
  };
}

/** A queued synthesis job of the default account, with `fields` over it. */
export function job(id: string, fields: Partial<JobRecord> = {}): JobRecord {
  return {
    id,
    accountId: DEFAULT_ACCOUNT_ID,
    keyId: 'key_a',
    environment: 'live',
    kind: 'tts',
    status: 'queued',
    request: JSON.stringify({ text: id }),
    createdAt: '2026-11-20T12:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    audio: null,
    resultExpiresAt: null,
    purgedAt: null,
    error: null,
    attempts: 0,
    callbackUrl: null,
    callback: { deliveredAt: null, attempts: 0, error: null },
    transcript: null,
    ...fields,
  };
}

function recording(id: string, createdAt: string, fields: Partial<RecordingRecord> = {}): RecordingRecord {
  return {
    id,
    callId: `call-${id}`,
    route: '+41445551234',
    caller: '+41791234567',
    called: '+41445551234',
    language: 'de-CH',
    createdAt,
    durationSeconds: 4.25,
    sizeBytes: 68_044,
    sampleRateHz: 8000,
    endedBy: 'silence',
    transcript: { status: 'pending', text: null, confidence: null },
    ...fields,
  };
}

/** Defines the conformance suite for the store `open` makes. */
export function describeStoreConformance(kind: string, open: OpenStore): void {
  /** Runs `body` on a fresh store and closes it whatever happens. */
  const withStore = async (body: (store: Store) => Promise<void>): Promise<void> => {
    const store = await open();
    try {
      await body(store);
    } finally {
      await store.close();
    }
  };

  describe(`${kind} store: accounts`, () => {
    it('starts with the default account and keeps others by id and name, oldest first', () =>
      withStore(async (store) => {
        const initial = await store.accounts.list();
        expect(initial.map((account) => account.id)).toEqual([DEFAULT_ACCOUNT_ID]);
        expect(initial[0]!.webhookSecret).toMatch(/^[0-9a-f]{64}$/);
        // Made after the default account (which the store made when it opened), at the same moment.
        const createdAt = new Date(Date.now() + 60_000).toISOString();
        const acme = { id: 'acct_acme', name: 'acme', createdAt, webhookSecret: 'a'.repeat(64), emails: ['ops@acme.ch'] };
        const later = { ...acme, id: 'acct_later', name: 'later', emails: [] };
        await store.accounts.insert(acme);
        await store.accounts.insert(later);
        expect(await store.accounts.findById('acct_acme')).toEqual(acme);
        expect(await store.accounts.findByName('later')).toEqual(later);
        expect(await store.accounts.findByName('nobody')).toBeUndefined();
        expect((await store.accounts.list()).map((account) => account.name)).toEqual(['default', 'acme', 'later']);
        await expect(store.accounts.insert({ ...acme, id: 'acct_other' })).rejects.toThrow();
      }));

    it('changes only the fields given', () =>
      withStore(async (store) => {
        await store.accounts.insert({ id: 'acct_acme', name: 'acme', createdAt: '2026-11-02T08:00:00.000Z', webhookSecret: 'old', emails: ['a@acme.ch'] });
        await store.accounts.update('acct_acme', { emails: ['b@acme.ch', 'c@acme.ch'] });
        expect(await store.accounts.findById('acct_acme')).toMatchObject({ webhookSecret: 'old', emails: ['b@acme.ch', 'c@acme.ch'] });
        await store.accounts.update('acct_acme', { webhookSecret: 'new' });
        expect(await store.accounts.findById('acct_acme')).toMatchObject({ webhookSecret: 'new', emails: ['b@acme.ch', 'c@acme.ch'] });
      }));
  });

  describe(`${kind} store: keys`, () => {
    it('finds keys by id and fingerprint, lists them oldest first, refuses a fingerprint twice', () =>
      withStore(async (store) => {
        await store.keys.insert(key('k2', { createdAt: '2026-11-03T10:00:00.000Z' }));
        await store.keys.insert(key('k1'));
        await store.keys.insert(key('k3', { createdAt: '2026-11-03T10:00:00.000Z', environment: 'sandbox' }));
        expect(await store.keys.findById('k1')).toEqual(key('k1'));
        expect(await store.keys.findByFingerprint('fp-k3')).toEqual(key('k3', { createdAt: '2026-11-03T10:00:00.000Z', environment: 'sandbox' }));
        expect(await store.keys.findByFingerprint('fp-none')).toBeUndefined();
        // Same time: the order they were made in.
        expect((await store.keys.list()).map((k) => k.id)).toEqual(['k1', 'k2', 'k3']);
        await expect(store.keys.insert(key('k4', { fingerprint: 'fp-k1' }))).rejects.toThrow();
      }));

    it('changes only the fields given, and clears one given as null', () =>
      withStore(async (store) => {
        await store.keys.insert(key('k1'));
        await store.keys.update('k1', { expiresAt: '2026-12-01T00:00:00.000Z', replacedBy: 'k2' });
        await store.keys.update('k1', { revokedAt: '2026-11-05T00:00:00.000Z' });
        expect(await store.keys.findById('k1')).toMatchObject({
          revokedAt: '2026-11-05T00:00:00.000Z',
          expiresAt: '2026-12-01T00:00:00.000Z',
          replacedBy: 'k2',
        });
        await store.keys.update('k1', { expiresAt: null });
        expect(await store.keys.findById('k1')).toMatchObject({ expiresAt: null, replacedBy: 'k2' });
        await store.keys.update('k1', {});
        expect((await store.keys.findById('k1'))!.revokedAt).toBe('2026-11-05T00:00:00.000Z');
      }));
  });

  describe(`${kind} store: the usage ledger`, () => {
    it('records an entry once per request id and keeps the key’s day totals across modes', () =>
      withStore(async (store) => {
        expect(await store.usage.record(entry('r1'), RATES)).toEqual({ recorded: true, notices: [] });
        expect((await store.usage.record(entry('r1', { audioSeconds: 99 }), RATES)).recorded).toBe(false);
        await store.usage.record(entry('r2', { mode: 'realtime', audioSeconds: 2.5 }), RATES);
        await store.usage.record(entry('r3', { direction: 'stt', audioSeconds: 7 }), RATES);
        await store.usage.record(entry('r4', { recordedAt: '2026-11-21T00:00:00.000Z' }), RATES);
        expect(await store.usage.dayTotals('key_a', '2026-11-20', 'tts')).toEqual({ requests: 2, audioSeconds: 12.5 });
        expect(await store.usage.dayTotals('key_a', '2026-11-20', 'stt')).toEqual({ requests: 1, audioSeconds: 7 });
        expect(await store.usage.dayTotals('key_b', '2026-11-20', 'tts')).toEqual({ requests: 0, audioSeconds: 0 });
        expect(await store.usage.findByRequestId('r2')).toEqual(entry('r2', { mode: 'realtime', audioSeconds: 2.5 }));
        expect(await store.usage.findByRequestId('none')).toBeUndefined();
      }));

    it('sums an account’s entries per day, environment, direction and mode within [from, to)', () =>
      withStore(async (store) => {
        await store.usage.record(entry('a', { recordedAt: '2026-11-19T23:59:59.999Z' }), RATES);
        await store.usage.record(entry('b', { audioSeconds: 1 }), RATES);
        await store.usage.record(entry('c', { audioSeconds: 2 }), RATES);
        await store.usage.record(entry('d', { environment: 'sandbox', audioSeconds: 3 }), RATES);
        await store.usage.record(entry('e', { recordedAt: '2026-11-22T00:00:00.000Z' }), RATES);
        await store.usage.record(entry('f', { accountId: 'acct_other' }), RATES);
        const rows = await store.usage.summary(DEFAULT_ACCOUNT_ID, '2026-11-20T00:00:00.000Z', '2026-11-22T00:00:00.000Z');
        expect(rows).toEqual([
          { day: '2026-11-20', environment: 'live', direction: 'tts', mode: 'batch', requests: 2, audioSeconds: 3 },
          { day: '2026-11-20', environment: 'sandbox', direction: 'tts', mode: 'batch', requests: 1, audioSeconds: 3 },
        ]);
      }));

    it('draws live use from the entitlements in order, with the overage on the last, and gives each notice once', () =>
      withStore(async (store) => {
        const free = await store.entitlements.insert({
          accountId: DEFAULT_ACCOUNT_ID,
          kind: 'evaluation',
          direction: 'any',
          grantedSeconds: 30,
          grantedCredits: null,
          validUntil: null,
          enforcement: 'hard',
          createdAt: '2026-11-01T00:00:00.000Z',
        });
        const credit = await store.entitlements.insert({
          accountId: DEFAULT_ACCOUNT_ID,
          kind: 'credit',
          direction: 'any',
          grantedSeconds: null,
          grantedCredits: 100,
          validUntil: null,
          enforcement: 'hard',
          createdAt: '2026-11-01T00:00:00.000Z',
        });
        expect(free).toMatchObject({ used: 0, noticesSent: [], kind: 'evaluation' });
        // 40 s of tts: 30 from the free minutes, 10 s × 2 credits = 20 credits.
        expect((await store.usage.record(entry('r1', { audioSeconds: 40 }), RATES)).notices).toEqual([]);
        expect((await store.entitlements.findById(free.id))!.used).toBe(30);
        expect((await store.entitlements.findById(credit.id))!.used).toBe(20);
        // 30 s more: 60 credits → 80 used, the 80 % notice.
        const eighty = await store.usage.record(entry('r2', { audioSeconds: 30 }), RATES);
        expect(eighty.notices.map((notice) => [notice.entitlement.id, notice.percent])).toEqual([[credit.id, 80]]);
        expect(eighty.notices[0]!.entitlement).toMatchObject({ used: 80, noticesSent: [80] });
        // Sandbox traffic draws nothing.
        await store.usage.record(entry('r3', { environment: 'sandbox', audioSeconds: 500 }), RATES);
        expect((await store.entitlements.findById(credit.id))!.used).toBe(80);
        // 20 s: 40 credits, past everything; the overage stays on the credit, the 95 % notice once.
        const past = await store.usage.record(entry('r4', { audioSeconds: 20 }), RATES);
        expect(past.notices.map((notice) => notice.percent)).toEqual([95]);
        expect((await store.entitlements.findById(credit.id))!).toMatchObject({ used: 120, noticesSent: [80, 95] });
        expect((await store.usage.record(entry('r5', { audioSeconds: 1 }), RATES)).notices).toEqual([]);
        // A request id recorded again draws nothing.
        await store.usage.record(entry('r5', { audioSeconds: 1000 }), RATES);
        expect((await store.entitlements.findById(credit.id))!.used).toBe(122);
      }));

    it('keeps draws exact when many entries of one account are recorded at once', () =>
      withStore(async (store) => {
        const credit = await store.entitlements.insert({
          accountId: DEFAULT_ACCOUNT_ID,
          kind: 'credit',
          direction: 'tts',
          grantedSeconds: null,
          grantedCredits: 1_000_000,
          validUntil: null,
          enforcement: 'soft',
          createdAt: '2026-11-01T00:00:00.000Z',
        });
        await Promise.all(Array.from({ length: 40 }, (_, i) => store.usage.record(entry(`c${i}`, { keyId: `key_${i % 4}`, audioSeconds: 1.5 }), RATES)));
        expect((await store.entitlements.findById(credit.id))!.used).toBeCloseTo(40 * 1.5 * 2, 9);
        const perKey = await Promise.all([0, 1, 2, 3].map((i) => store.usage.dayTotals(`key_${i}`, '2026-11-20', 'tts')));
        expect(perKey).toEqual(Array.from({ length: 4 }, () => ({ requests: 10, audioSeconds: 15 })));
      }));
  });

  describe(`${kind} store: entitlements`, () => {
    it('lists an account’s entitlements oldest first, tops up only credit, and removes once', () =>
      withStore(async (store) => {
        const base = {
          accountId: 'acct_acme',
          direction: 'stt' as const,
          grantedSeconds: 600,
          grantedCredits: null,
          validUntil: '2027-01-01T00:00:00.000Z',
          enforcement: 'hard' as const,
          createdAt: '2026-11-01T00:00:00.000Z',
        };
        const first = await store.entitlements.insert({ ...base, kind: 'committed' });
        const credit = await store.entitlements.insert({ ...base, kind: 'credit', grantedSeconds: null, grantedCredits: 50 });
        await store.entitlements.insert({ ...base, accountId: 'acct_other', kind: 'evaluation' });
        expect((await store.entitlements.list('acct_acme')).map((e) => e.id)).toEqual([first.id, credit.id]);
        expect(credit).toMatchObject({ ...base, kind: 'credit', grantedSeconds: null, grantedCredits: 50, used: 0, noticesSent: [] });
        await store.entitlements.topUp(credit.id, 25);
        await store.entitlements.topUp(first.id, 25);
        expect((await store.entitlements.findById(credit.id))!.grantedCredits).toBe(75);
        expect((await store.entitlements.findById(first.id))!.grantedCredits).toBeNull();
        expect(await store.entitlements.remove(first.id)).toBe(true);
        expect(await store.entitlements.remove(first.id)).toBe(false);
        expect(await store.entitlements.findById(first.id)).toBeUndefined();
        expect((await store.entitlements.list('acct_acme')).map((e) => e.id)).toEqual([credit.id]);
      }));
  });

  describe(`${kind} store: recordings`, () => {
    it('pages newest first from a cursor, ties by id, and keeps transcripts', () =>
      withStore(async (store) => {
        const same = '2026-11-20T10:00:00.000Z';
        for (const [id, at] of [
          ['rec_b', same],
          ['rec_a', same],
          ['rec_c', '2026-11-20T11:00:00.000Z'],
          ['rec_d', '2026-11-19T09:00:00.000Z'],
        ] as const) {
          await store.recordings.insert(recording(id, at));
        }
        expect(await store.recordings.findById('rec_a')).toEqual(recording('rec_a', same));
        const first = await store.recordings.page(2);
        expect(first.map((r) => r.id)).toEqual(['rec_c', 'rec_b']);
        const next = await store.recordings.page(2, { createdAt: first[1]!.createdAt, id: first[1]!.id });
        expect(next.map((r) => r.id)).toEqual(['rec_a', 'rec_d']);
        await store.recordings.setTranscript('rec_a', { status: 'done', text: 'grüezi', confidence: 0.82 });
        await store.recordings.setTranscript('rec_d', { status: 'failed', text: null, confidence: null });
        expect((await store.recordings.findById('rec_a'))!.transcript).toEqual({ status: 'done', text: 'grüezi', confidence: 0.82 });
        expect((await store.recordings.withTranscriptStatus('pending')).map((r) => r.id)).toEqual(['rec_b', 'rec_c']);
        expect(await store.recordings.createdUpTo(same, 10)).toEqual(['rec_d', 'rec_a', 'rec_b']);
        expect(await store.recordings.createdUpTo(same, 1)).toEqual(['rec_d']);
        expect(await store.recordings.delete('rec_a')).toBe(true);
        expect(await store.recordings.delete('rec_a')).toBe(false);
        expect(await store.recordings.findById('rec_a')).toBeUndefined();
      }));
  });

  describe(`${kind} store: bytes of the recordings and jobs`, () => {
    it('keeps, replaces, streams and removes bytes by area and name', () =>
      withStore(async (store) => {
        const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-blobs-'));
        try {
          const jobs = store.blobs('jobs', path.join(folder, 'jobs'));
          const recordings = store.blobs('recordings', path.join(folder, 'recordings'));
          expect(await jobs.get('job_a.audio')).toBeNull();
          expect(await jobs.open('job_a.audio')).toBeNull();
          await jobs.remove('job_a.audio');
          const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
          expect(await jobs.put('job_a.audio', [bytes.subarray(0, 44), bytes.subarray(44)])).toBe(bytes.length);
          expect(await jobs.get('job_a.audio')).toEqual(bytes);
          // The areas do not see each other's names.
          expect(await recordings.get('job_a.audio')).toBeNull();
          const opened = (await jobs.open('job_a.audio'))!;
          expect(opened.sizeBytes).toBe(bytes.length);
          // Removed while it streams: what was opened is still read whole.
          await jobs.remove('job_a.audio');
          expect(Buffer.concat(await opened.stream.toArray())).toEqual(bytes);
          expect(await jobs.get('job_a.audio')).toBeNull();
          await recordings.put('rec_a.wav', [Buffer.from('first')]);
          await recordings.put('rec_a.wav', [Buffer.from('second')]);
          expect((await recordings.get('rec_a.wav'))!.toString()).toBe('second');
          expect(await recordings.put('rec_empty.wav', [])).toBe(0);
          expect(await recordings.get('rec_empty.wav')).toEqual(Buffer.alloc(0));
          expect(await recordings.removeAbandoned(new Date())).toBe(0);
          const aborted = AbortSignal.abort();
          await expect(recordings.get('rec_a.wav', aborted)).rejects.toThrow();
        } finally {
          await fs.rm(folder, { recursive: true, force: true });
        }
      }));
  });

  describe(`${kind} store: limit counters`, () => {
    it('takes tokens while the bucket holds one, never more than it holds even when asked at once', () =>
      withStore(async (store) => {
        const shape = { capacity: 5, refillPerSecond: 0.001 };
        const takes = await Promise.all(Array.from({ length: 12 }, () => store.limits.takeToken('test:rate:a', shape)));
        expect(takes.filter((take) => take.taken)).toHaveLength(5);
        const refused = takes.filter((take) => !take.taken);
        expect(refused).toHaveLength(7);
        // What is left tells the client how long to wait: less than one token.
        for (const take of refused) expect(take.tokens).toBeLessThan(1);
        expect(Math.min(...takes.filter((take) => take.taken).map((take) => take.tokens))).toBeLessThan(1);
        // Another bucket is full.
        expect(await store.limits.takeToken('test:rate:b', shape)).toMatchObject({ taken: true });
      }));

    it('refills a bucket with time', () =>
      withStore(async (store) => {
        const shape = { capacity: 2, refillPerSecond: 20 };
        expect((await store.limits.takeToken('test:rate:c', shape)).taken).toBe(true);
        expect((await store.limits.takeToken('test:rate:c', shape)).taken).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 120));
        expect((await store.limits.takeToken('test:rate:c', shape)).taken).toBe(true);
      }));

    it('holds slots to their limit when taken at once, and gives a released one back once', () =>
      withStore(async (store) => {
        const taken = await Promise.all(Array.from({ length: 10 }, () => store.limits.takeSlot('test:slots:a', 4)));
        const releases = taken.filter((release) => release !== null);
        expect(releases).toHaveLength(4);
        expect(await store.limits.slotsTaken('test:slots:a')).toBe(4);
        expect(await store.limits.takeSlot('test:slots:a', 4)).toBeNull();
        expect(await store.limits.takeSlot('test:slots:a', 0)).toBeNull();
        releases[0]!();
        releases[0]!();
        await expect.poll(() => store.limits.slotsTaken('test:slots:a')).toBe(3);
        const again = await store.limits.takeSlot('test:slots:a', 4);
        expect(again).not.toBeNull();
        expect(await store.limits.takeSlot('test:slots:a', 4)).toBeNull();
        // Another name counts on its own.
        expect(await store.limits.takeSlot('test:slots:b', 1)).not.toBeNull();
        for (const release of [...releases, again!]) release();
        await expect.poll(() => store.limits.slotsTaken('test:slots:a')).toBe(0);
      }));
  });

  describe(`${kind} store: jobs`, () => {
    it('queues, claims oldest first, finishes and lists newest first', () =>
      withStore(async (store) => {
        await store.jobs.insert(job('j2', { createdAt: '2026-11-20T12:00:01.000Z', callbackUrl: 'https://bot.example/done' }));
        await store.jobs.insert(job('j1'));
        await store.jobs.insert(job('j3', { keyId: 'key_b', createdAt: '2026-11-20T12:00:01.000Z' }));
        await store.jobs.insert(job('j4', { environment: 'sandbox' }));
        expect(await store.jobs.queuedOf('key_a')).toBe(3);
        expect(await store.jobs.findById('j2')).toEqual(job('j2', { createdAt: '2026-11-20T12:00:01.000Z', callbackUrl: 'https://bot.example/done' }));
        const claimed = await store.jobs.claim('2026-11-20T12:01:00.000Z');
        expect(claimed).toMatchObject({ id: 'j1', status: 'running', startedAt: '2026-11-20T12:01:00.000Z', attempts: 1 });
        expect((await store.jobs.claim('2026-11-20T12:01:00.000Z'))!.id).toBe('j4');
        // Same time: the order they came in.
        expect((await store.jobs.claim('2026-11-20T12:01:00.000Z'))!.id).toBe('j2');
        expect(await store.jobs.queuedOf('key_a')).toBe(0);
        const audio = { encoding: 'mp3', mediaType: 'audio/mpeg', sampleRateHz: 24000, byteLength: 4096, seconds: 1.25 };
        await store.jobs.finish('j1', {
          status: 'succeeded',
          finishedAt: '2026-11-20T12:02:00.000Z',
          resultExpiresAt: '2026-11-22T12:02:00.000Z',
          audio,
          error: null,
        });
        const failure = { code: 'tts.unavailable', message: 'no engine' };
        await store.jobs.finish('j2', {
          status: 'failed',
          finishedAt: '2026-11-20T12:03:00.000Z',
          resultExpiresAt: '2026-11-22T12:03:00.000Z',
          audio: null,
          error: failure,
        });
        // A job that is not running is not finished again.
        await store.jobs.finish('j1', {
          status: 'failed',
          finishedAt: '2026-11-20T13:00:00.000Z',
          resultExpiresAt: '2026-11-22T13:00:00.000Z',
          audio: null,
          error: failure,
        });
        expect(await store.jobs.findById('j1')).toMatchObject({ status: 'succeeded', audio, error: null, finishedAt: '2026-11-20T12:02:00.000Z' });
        expect(await store.jobs.findById('j2')).toMatchObject({ status: 'failed', audio: null, error: failure });
        expect((await store.jobs.list(DEFAULT_ACCOUNT_ID, 'live', 10)).map((j) => j.id)).toEqual(['j3', 'j2', 'j1']);
        expect((await store.jobs.list(DEFAULT_ACCOUNT_ID, 'live', 1)).map((j) => j.id)).toEqual(['j3']);
        expect((await store.jobs.list(DEFAULT_ACCOUNT_ID, 'sandbox', 10)).map((j) => j.id)).toEqual(['j4']);
      }));

    it('keeps a recognition job’s transcript', () =>
      withStore(async (store) => {
        await store.jobs.insert(job('s1', { kind: 'stt', request: JSON.stringify({ lang: 'de-CH' }) }));
        await store.jobs.claim('2026-11-20T12:01:00.000Z');
        const transcript = { text: 'grüezi mitenand', lang: 'de-CH', words: [{ w: 'grüezi', start: 0.1, end: 0.5, conf: 0.9 }], duration_s: 1.2 };
        await store.jobs.finish('s1', {
          status: 'succeeded',
          finishedAt: '2026-11-20T12:02:00.000Z',
          resultExpiresAt: '2026-11-22T12:02:00.000Z',
          audio: null,
          transcript,
          error: null,
        });
        expect(await store.jobs.findById('s1')).toMatchObject({ kind: 'stt', transcript });
      }));

    it('gives each queued job to one claimant when many claim at once', () =>
      withStore(async (store) => {
        for (let i = 0; i < 10; i++) await store.jobs.insert(job(`q${i}`, { createdAt: `2026-11-20T12:00:0${i}.000Z` }));
        const claims = await Promise.all(Array.from({ length: 25 }, () => store.jobs.claim('2026-11-20T12:01:00.000Z')));
        const ids = claims.filter((claimed) => claimed !== undefined).map((claimed) => claimed.id);
        expect(ids.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `q${i}`));
        expect(await store.jobs.claim('2026-11-20T12:01:00.000Z')).toBeUndefined();
      }));

    it('finds expired results and pending callbacks', () =>
      withStore(async (store) => {
        for (const id of ['e1', 'e2', 'e3']) await store.jobs.insert(job(id, { callbackUrl: id === 'e3' ? null : `https://bot.example/${id}` }));
        for (let i = 0; i < 3; i++) await store.jobs.claim('2026-11-20T12:01:00.000Z');
        await store.jobs.finish('e1', {
          status: 'succeeded',
          finishedAt: '2026-11-20T12:02:00.000Z',
          resultExpiresAt: '2026-11-22T12:02:00.000Z',
          audio: null,
          error: null,
        });
        await store.jobs.finish('e2', {
          status: 'succeeded',
          finishedAt: '2026-11-20T12:01:30.000Z',
          resultExpiresAt: '2026-11-22T12:01:30.000Z',
          audio: null,
          error: null,
        });
        await store.jobs.finish('e3', {
          status: 'succeeded',
          finishedAt: '2026-11-20T12:03:00.000Z',
          resultExpiresAt: '2026-11-22T12:03:00.000Z',
          audio: null,
          error: null,
        });
        expect(await store.jobs.expired('2026-11-22T12:02:00.000Z', 10)).toEqual(['e2', 'e1']);
        await store.jobs.markPurged('e2', '2026-11-22T12:05:00.000Z');
        expect(await store.jobs.expired('2026-11-23T00:00:00.000Z', 10)).toEqual(['e1', 'e3']);
        expect((await store.jobs.findById('e2'))!.purgedAt).toBe('2026-11-22T12:05:00.000Z');
        expect((await store.jobs.pendingCallbacks(3, 10)).map((j) => j.id)).toEqual(['e2', 'e1']);
        await store.jobs.recordCallback('e2', { deliveredAt: null, attempts: 3, error: 'HTTP 500' });
        await store.jobs.recordCallback('e1', { deliveredAt: null, attempts: 1, error: 'timeout' });
        expect((await store.jobs.pendingCallbacks(3, 10)).map((j) => j.id)).toEqual(['e1']);
        await store.jobs.recordCallback('e1', { deliveredAt: '2026-11-20T12:04:00.000Z', attempts: 2, error: null });
        expect(await store.jobs.pendingCallbacks(3, 10)).toEqual([]);
        expect((await store.jobs.findById('e1'))!.callback).toEqual({ deliveredAt: '2026-11-20T12:04:00.000Z', attempts: 2, error: null });
      }));
  });
}
