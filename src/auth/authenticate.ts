import { ApiError, type ErrorFamily } from '../api/errors.js';
import type { Environment } from '../store/store.js';
import type { KeyLookup, KeyService } from './key-service.js';

/** Who is acting: the key's id and environment, and what to tell about the key's status. */
export interface Principal {
  readonly keyId: string;
  /** The account the key acts for. */
  readonly accountId: string;
  readonly environment: Environment;
  /** Value of `X-Speech-Key-Status` while a rotated key is in its overlap (spec 5.6). */
  readonly keyStatus: string | null;
}

/**
 * Authenticates a presented API key. The one function every transport uses: the HTTP API
 * passes the `X-API-Key` header, WebSocket upgrades pass whichever of header, subprotocol or
 * query parameter carried the key.
 *
 * @throws ApiError `<family>.unauthenticated` (401) for a missing or unknown key,
 *   `<family>.forbidden` (403) for a revoked key or one whose rotation overlap has ended.
 */
export async function authenticate(keys: KeyService, presented: string | undefined, family: ErrorFamily): Promise<Principal> {
  if (presented === undefined || presented.trim() === '') {
    throw ApiError.of(family, 'unauthenticated', 'Send your API key in the X-API-Key header.');
  }
  const lookup = await keys.lookup(presented.trim());
  if (lookup.status === 'active' || lookup.status === 'superseded') {
    const { record } = lookup;
    const keyStatus = lookup.status === 'superseded' ? `superseded; stops working ${lookup.stopsWorkingAt}` : null;
    return { keyId: record.id, accountId: record.accountId, environment: record.environment, keyStatus };
  }
  throw refusalOf(lookup, family)!;
}

/**
 * Why a key may not act, as the error to answer, or `null` when it may (active, or superseded
 * within its overlap). Shared by authentication and by the watch over open sessions.
 */
export function refusalOf(lookup: KeyLookup, family: ErrorFamily): ApiError | null {
  switch (lookup.status) {
    case 'unknown':
      return ApiError.of(family, 'unauthenticated', 'The API key is not valid. Keys begin with sv_ (live) or sv_test_ (sandbox).');
    case 'revoked':
      return ApiError.of(family, 'forbidden', `The API key ${lookup.record.id} was revoked on ${lookup.record.revokedAt}.`);
    case 'expired':
      return ApiError.of(
        family,
        'forbidden',
        `The API key ${lookup.record.id} was superseded by rotation and stopped working at ${lookup.record.expiresAt}; use its successor.`,
      );
    case 'superseded':
    case 'active':
      return null;
  }
}
