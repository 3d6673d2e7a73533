/** The store conformance suite on the embedded SQLite store (a fresh in-memory database per test). */
import { expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { describeStoreConformance, job } from './store-conformance.js';

describeStoreConformance('SQLite', async () => SqliteStore.open(':memory:'));

it('has no orphaned jobs in the embedded store: its one process runs them, and its start puts back what ran', async () => {
  const store = SqliteStore.open(':memory:');
  await store.jobs.insert(job('j1'));
  await store.jobs.claim('2026-11-20T12:01:00.000Z');
  expect(await store.jobs.requeueOrphaned()).toBe(0);
  expect(await store.jobs.requeueRunning()).toBe(1);
  await store.close();
});
