/**
 * A {@link BlobStore} in PostgreSQL (table `blobs`, one row per area and name, the bytes as
 * `bytea`): every instance of a shared deployment reads what any of them wrote, so a job's
 * result or a voicemail is served by whichever instance the client reaches.
 */
import { Readable } from 'node:stream';
import type pg from 'pg';
import type { BlobArea, BlobStore, OpenedBlob } from './blob-store.js';

/** The bytes of one area in the shared database. */
export class PostgresBlobStore implements BlobStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly area: BlobArea,
  ) {}

  async put(name: string, parts: readonly Uint8Array[]): Promise<number> {
    const bytes = Buffer.concat(parts);
    // One statement: the row is there whole or not at all.
    await this.pool.query(
      `INSERT INTO blobs (area, name, bytes, created_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (area, name) DO UPDATE SET bytes = excluded.bytes, created_at = excluded.created_at`,
      [this.area, name, bytes],
    );
    return bytes.length;
  }

  async get(name: string, signal?: AbortSignal): Promise<Buffer | null> {
    signal?.throwIfAborted();
    const { rows } = await this.pool.query<{ bytes: Buffer }>('SELECT bytes FROM blobs WHERE area = $1 AND name = $2', [this.area, name]);
    signal?.throwIfAborted();
    return rows[0]?.bytes ?? null;
  }

  async open(name: string): Promise<OpenedBlob | null> {
    const bytes = await this.get(name);
    // The bytes are read whole: a removal while they stream cannot cut them short.
    return bytes && { stream: Readable.from([bytes]), sizeBytes: bytes.length };
  }

  async remove(name: string): Promise<void> {
    await this.pool.query('DELETE FROM blobs WHERE area = $1 AND name = $2', [this.area, name]);
  }

  /** Nothing is ever left half-written: each write is one statement. */
  async removeAbandoned(): Promise<number> {
    return 0;
  }
}
