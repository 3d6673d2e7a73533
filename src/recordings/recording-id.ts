import { randomBytes } from 'node:crypto';

/** `rec_` and 128 random bits in base64url: unguessable, and safe as a file name. */
const RECORDING_ID = /^rec_[A-Za-z0-9_-]{22}$/;

/** A new recording id. */
export function newRecordingId(): string {
  return `rec_${randomBytes(16).toString('base64url')}`;
}

/**
 * Whether `id` has the shape of a recording id. Anything else is answered as unknown before
 * it comes near the store or the file system (it names a file there).
 */
export function isRecordingId(id: string): boolean {
  return RECORDING_ID.test(id);
}
