/** The store conformance suite on the embedded SQLite store (a fresh in-memory database per test). */
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { describeStoreConformance } from './store-conformance.js';

describeStoreConformance('SQLite', async () => SqliteStore.open(':memory:'));
