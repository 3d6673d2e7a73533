/**
 * The `before` cursor of the recordings list: the position of the last recording of a page,
 * opaque to clients. A position rather than an id, so that a page still continues when the
 * recording it ended with has been deleted in between.
 */
import type { RecordingPosition } from '../store/store.js';
import { isRecordingId } from './recording-id.js';

const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A cursor that was not made by {@link encodeCursor}. */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/** The cursor of the page that follows `position`. */
export function encodeCursor(position: RecordingPosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, 'utf8').toString('base64url');
}

/**
 * The position a cursor stands for.
 * @throws InvalidCursorError when it is not one this service made.
 */
export function decodeCursor(cursor: string): RecordingPosition {
  const [createdAt, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !createdAt || !id || !CREATED_AT.test(createdAt) || !isRecordingId(id)) {
    throw new InvalidCursorError('before is not a cursor from this list; pass the next value of the previous page');
  }
  return { createdAt, id };
}
