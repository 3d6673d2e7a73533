/** Accounts come to a store made before them: its keys join the default account, nothing else changes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AccountService } from '../../src/auth/account-service.js';
import { KeyService } from '../../src/auth/key-service.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => fs.rmSync(folder, { recursive: true, force: true })));

describe('accounts in the store', () => {
  it('are added to a store of the version before, its keys kept and given to the default account, its usage put in the ledger', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sprachrohr-accounts-'));
    folders.push(folder);
    const file = path.join(folder, 'sprachrohr.sqlite');
    // A store as version 2 left it: keys without an account.
    const old = new Database(file);
    old.exec(`CREATE TABLE api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL, environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
      fingerprint TEXT NOT NULL UNIQUE, display_prefix TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT, expires_at TEXT, replaced_by TEXT);
      CREATE TABLE usage_daily (key_id TEXT NOT NULL, environment TEXT NOT NULL, day TEXT NOT NULL, direction TEXT NOT NULL, mode TEXT NOT NULL,
      requests INTEGER NOT NULL, audio_seconds REAL NOT NULL, PRIMARY KEY (key_id, day, direction, mode));
      CREATE TABLE recordings (id TEXT PRIMARY KEY, call_id TEXT NOT NULL, route TEXT NOT NULL, caller TEXT NOT NULL, called TEXT NOT NULL,
      language TEXT NOT NULL, created_at TEXT NOT NULL, duration_seconds REAL NOT NULL, size_bytes INTEGER NOT NULL, sample_rate_hz INTEGER NOT NULL,
      ended_by TEXT NOT NULL, transcript_status TEXT NOT NULL, transcript_text TEXT, transcript_confidence REAL);
      INSERT INTO api_keys VALUES ('key_old', 'kept', 'live', '${'a'.repeat(64)}', 'sv_abcd…', '2026-01-01T00:00:00.000Z', NULL, NULL, NULL);
      INSERT INTO usage_daily VALUES ('key_old', 'live', '2026-01-01', 'tts', 'batch', 3, 12.5);`);
    old.pragma('user_version = 2');
    old.close();

    const store = SqliteStore.open(file);
    expect(await store.keys.findById('key_old')).toMatchObject({ name: 'kept', accountId: DEFAULT_ACCOUNT_ID });
    expect(await store.usage.dayTotals('key_old', '2026-01-01', 'tts')).toEqual({ requests: 3, audioSeconds: 12.5 });
    // The day totals there were are in the ledger (migration 4), under the key's account.
    expect(await store.usage.summary(DEFAULT_ACCOUNT_ID, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z')).toEqual([
      { day: '2026-01-01', environment: 'live', direction: 'tts', mode: 'batch', requests: 3, audioSeconds: 12.5 },
    ]);
    const accounts = new AccountService(store.accounts);
    const [only] = await accounts.list();
    expect(only).toMatchObject({ id: DEFAULT_ACCOUNT_ID, name: 'default', emails: [] });
    expect(only!.webhookSecret).toMatch(/^[0-9a-f]{64}$/);
    // New accounts and their keys; a rotated key stays with its account.
    const acme = await accounts.create('acme', ['billing@acme.example']);
    const keys = new KeyService(store.keys, 's'.repeat(32));
    const created = await keys.create('ivr', 'live', acme.id);
    const { created: successor } = await keys.rotate(created.record.id);
    expect(successor.record.accountId).toBe(acme.id);
    const lookup = await keys.lookup(successor.key);
    expect(lookup.status === 'active' && lookup.record.accountId).toBe(acme.id);
    await store.close();
  });
});
