/**
 * The check of an operator's bearer token (`Authorization: Bearer …`) on the operations
 * endpoints. The two sides are compared as SHA-256 digests in constant time, so neither the
 * token's content nor its length leaks through the answer's timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Whether an `Authorization` header carries `Bearer <token>`. */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  const presented = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value ?? '')?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
}
