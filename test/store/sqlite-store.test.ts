/**
 * The embedded store's files on disk: readable by their owner alone, and a WAL that does not
 * stay large after a write burst that a reader in another connection held back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore, WAL_SIZE_LIMIT_BYTES } from '../../src/store/sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

function freshFile(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sprachrohr-store-'));
  folders.push(folder);
  return path.join(folder, 'data', 'sprachrohr.sqlite');
}

const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

let written = 0;

async function burst(store: SqliteStore, writes: number): Promise<void> {
  for (let i = 0; i < writes; i++) {
    await store.usage.record(
      {
        requestId: `req_${written++}`,
        accountId: 'acct_default',
        keyId: `key-${i % 5000}`,
        environment: 'live',
        recordedAt: `2026-11-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00.000Z`,
        direction: 'tts',
        mode: 'batch',
        audioSeconds: 1.5,
      },
      { tts: 1, stt: 1 },
    );
  }
}

describe('the store on disk', () => {
  it('creates its folder, database, WAL and shared-memory files for its owner alone', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    await burst(store, 10);
    expect(modeOf(path.dirname(file))).toBe(0o700);
    for (const suffix of ['', '-wal', '-shm']) expect(modeOf(file + suffix), suffix || 'database').toBe(0o600);
    await store.close();
  });

  it('narrows the files of an earlier, world-readable store when it opens them', async () => {
    const file = freshFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const earlier = new Database(file);
    earlier.pragma('journal_mode = WAL');
    earlier.exec('CREATE TABLE t (x)');
    // Left open: its WAL and shared-memory files stay on disk.
    for (const suffix of ['', '-wal', '-shm']) fs.chmodSync(file + suffix, 0o644);
    const store = SqliteStore.open(file);
    for (const suffix of ['', '-wal', '-shm']) expect(modeOf(file + suffix), suffix || 'database').toBe(0o600);
    await store.close();
    earlier.close();
  });

  it('folds a WAL that a reader let grow back under the limit once the reader is done', async () => {
    const file = freshFile();
    const store = SqliteStore.open(file);
    await burst(store, 10);
    // Another connection (the CLI, a backup) holds a snapshot: no checkpoint can pass it.
    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM usage_ledger').get();
    while (fs.statSync(`${file}-wal`).size <= WAL_SIZE_LIMIT_BYTES * 4) await burst(store, 2000);
    const grown = fs.statSync(`${file}-wal`).size;
    expect(store.foldWal()).toBe(grown);
    reader.exec('COMMIT');
    reader.close();
    // The periodic look folds it back and truncates it, with no write needed.
    expect(store.foldWal()).toBe(0);
    // Writes go on; a WAL that a reader again lets grow is cut back to the limit by SQLite
    // itself (journal_size_limit) once a checkpoint resets it.
    await burst(store, 100);
    expect(fs.statSync(`${file}-wal`).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    // Nothing was lost on the way.
    const totals = await store.usage.dayTotals('key-0', '2026-11-01', 'tts');
    expect(totals.requests).toBeGreaterThan(0);
    await store.close();
  }, 60_000);
});
