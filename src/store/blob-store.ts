/**
 * Named bytes of one area of the service (the recordings' WAV files, the jobs' results and
 * uploads), behind one interface: files in the data folder with the embedded store, rows of
 * the database with PostgreSQL, so that no instance of a shared deployment keeps anything
 * another one needs.
 */
import type { Readable } from 'node:stream';

/** The areas that keep bytes; each is a folder of the data folder, or a part of the `blobs` table. */
export type BlobArea = 'recordings' | 'jobs';

/** Bytes opened for streaming, and their count. */
export interface OpenedBlob {
  readonly stream: Readable;
  readonly sizeBytes: number;
}

/** The bytes of one area, by name. Names are chosen by the service (ids it made), never by a client. */
export interface BlobStore {
  /**
   * Keeps `parts`, one after another, as the bytes of `name`: whole or not at all, replacing
   * what `name` held; a reader (or a crash) never meets half of them.
   * @returns how many bytes were kept.
   */
  put(name: string, parts: readonly Uint8Array[]): Promise<number>;
  /** The bytes of `name`, or `null` when there are none. */
  get(name: string, signal?: AbortSignal): Promise<Buffer | null>;
  /**
   * Opens the bytes of `name` for streaming, or `null` when there are none. Bytes being
   * streamed stay readable even when `name` is removed meanwhile.
   */
  open(name: string): Promise<OpenedBlob | null>;
  /** Removes `name`; a name that holds nothing is fine. */
  remove(name: string): Promise<void>;
  /**
   * Removes what a process that stopped mid-write left behind, more than an hour old so that
   * a write in progress is never touched.
   * @returns how many were removed.
   */
  removeAbandoned(now: Date): Promise<number>;
}
