/** The recordings index in the embedded store: created by a migration on an existing store too. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { RecordingRecord } from '../../src/store/store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

const RECORD: RecordingRecord = {
  id: 'rec_AAAAAAAAAAAAAAAAAAAAAA',
  callId: 'call-1',
  route: '+41445551234',
  caller: '+41791234567',
  called: '+41445551234',
  language: 'de-CH',
  createdAt: '2026-03-01T08:00:00.000Z',
  durationSeconds: 12.34,
  sizeBytes: 197484,
  sampleRateHz: 8000,
  endedBy: 'key',
  transcript: { status: 'pending', text: null, confidence: null },
};

describe('the recordings index', () => {
  it('is added to a store made before it, keeping its keys', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sprachrohr-recording-index-'));
    folders.push(folder);
    const file = path.join(folder, 'sprachrohr.sqlite');
    const earlier = SqliteStore.open(file);
    await earlier.keys.insert({
      id: 'key_1',
      accountId: 'acct_default',
      name: 'kept',
      environment: 'live',
      fingerprint: 'f'.repeat(64),
      displayPrefix: 'sv_abcd…',
      createdAt: '2026-01-01T00:00:00.000Z',
      revokedAt: null,
      expiresAt: null,
      replacedBy: null,
    });
    await earlier.close();
    // Back to the schema of the first version, as a store of that version left it.
    const db = new Database(file);
    db.exec(
      'DROP TABLE jobs; DROP TABLE entitlement_draws; DROP TABLE entitlements; DROP TABLE usage_ledger; DROP TABLE recordings; DROP INDEX api_keys_by_account; ALTER TABLE api_keys DROP COLUMN account_id; DROP TABLE accounts',
    );
    db.pragma('user_version = 1');
    db.close();

    const store = SqliteStore.open(file);
    expect((await store.keys.findById('key_1'))?.name).toBe('kept');
    await store.recordings.insert(RECORD);
    expect(await store.recordings.findById(RECORD.id)).toEqual(RECORD);
    await store.recordings.setTranscript(RECORD.id, { status: 'done', text: 'Grüezi, rufen Sie mich zurück.', confidence: 0.82 });
    expect((await store.recordings.findById(RECORD.id))?.transcript).toEqual({ status: 'done', text: 'Grüezi, rufen Sie mich zurück.', confidence: 0.82 });
    expect(await store.recordings.withTranscriptStatus('pending')).toEqual([]);
    expect(await store.recordings.createdUpTo('2026-03-01T08:00:00.000Z', 10)).toEqual([RECORD.id]);
    expect(await store.recordings.createdUpTo('2026-03-01T07:59:59.999Z', 10)).toEqual([]);
    expect(await store.recordings.delete(RECORD.id)).toBe(true);
    expect(await store.recordings.delete(RECORD.id)).toBe(false);
    await store.close();
  });

  it('refuses values outside its enumerations', async () => {
    const store = SqliteStore.open(':memory:');
    await expect(store.recordings.insert({ ...RECORD, endedBy: 'timeout' as never })).rejects.toThrow(/CHECK/);
    await expect(store.recordings.insert({ ...RECORD, transcript: { status: 'lost' as never, text: null, confidence: null } })).rejects.toThrow(/CHECK/);
    await store.close();
  });
});
