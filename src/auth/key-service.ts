import { DEFAULT_ACCOUNT_ID, type ApiKeyRecord, type Environment, type KeyRepository } from '../store/store.js';
import { displayPrefix, environmentOfKey, fingerprintKey, generateApiKey, generateKeyId } from './api-key.js';

/** How long a superseded key keeps working after a rotation (spec 5.6). */
export const ROTATION_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

/** A key just created: the secret is shown once and never stored. */
export interface CreatedKey {
  readonly record: ApiKeyRecord;
  readonly key: string;
}

/** A key-management failure with a message meant for the operator. */
export class KeyManagementError extends Error {
  override name = 'KeyManagementError';
}

/** Result of looking up a presented key. */
export type KeyLookup =
  | { readonly status: 'unknown' }
  | { readonly status: 'revoked'; readonly record: ApiKeyRecord }
  | { readonly status: 'expired'; readonly record: ApiKeyRecord }
  | { readonly status: 'active'; readonly record: ApiKeyRecord }
  | { readonly status: 'superseded'; readonly record: ApiKeyRecord; readonly stopsWorkingAt: string };

/** Creates, lists, revokes and rotates API keys; looks keys up for authentication. */
export class KeyService {
  constructor(
    private readonly keys: KeyRepository,
    private readonly secret: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates a key with a name in an environment, for an account (the default one unless given; the caller checks it exists). */
  async create(name: string, environment: Environment, accountId: string = DEFAULT_ACCOUNT_ID): Promise<CreatedKey> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) throw new KeyManagementError('a key name must be 1 to 100 characters');
    const key = generateApiKey(environment);
    const record: ApiKeyRecord = {
      id: generateKeyId(),
      accountId,
      name: trimmed,
      environment,
      fingerprint: fingerprintKey(this.secret, key),
      displayPrefix: displayPrefix(key, environment),
      createdAt: this.now().toISOString(),
      revokedAt: null,
      expiresAt: null,
      replacedBy: null,
    };
    await this.keys.insert(record);
    return { record, key };
  }

  /** Every key, oldest first. */
  list(): Promise<ApiKeyRecord[]> {
    return this.keys.list();
  }

  /** Revokes a key at once. */
  async revoke(id: string): Promise<ApiKeyRecord> {
    const record = await this.require(id);
    if (record.revokedAt) throw new KeyManagementError(`key ${id} is already revoked`);
    await this.keys.update(id, { revokedAt: this.now().toISOString() });
    return this.require(id);
  }

  /**
   * Rotates a key: a new key with the same name, environment and account, while the old one keeps
   * working for {@link ROTATION_OVERLAP_MS}.
   */
  async rotate(id: string): Promise<{ old: ApiKeyRecord; created: CreatedKey }> {
    const old = await this.require(id);
    if (old.revokedAt) throw new KeyManagementError(`key ${id} is revoked and cannot be rotated`);
    if (old.replacedBy) throw new KeyManagementError(`key ${id} was already rotated; rotate ${old.replacedBy} instead`);
    const created = await this.create(old.name, old.environment, old.accountId);
    const expiresAt = new Date(this.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
    await this.keys.update(id, { expiresAt, replacedBy: created.record.id });
    return { old: await this.require(id), created };
  }

  /** Ends a rotation's overlap now: the superseded key stops working, its successor is unaffected. */
  async endOverlap(id: string): Promise<ApiKeyRecord> {
    const record = await this.require(id);
    if (!record.replacedBy) throw new KeyManagementError(`key ${id} was not rotated; there is no overlap to end`);
    const now = this.now().toISOString();
    if (record.expiresAt && record.expiresAt <= now) throw new KeyManagementError(`the overlap of key ${id} has already ended`);
    await this.keys.update(id, { expiresAt: now });
    return this.require(id);
  }

  /** Looks up a presented key by its fingerprint and tells whether it may act. */
  async lookup(presented: string): Promise<KeyLookup> {
    const environment = environmentOfKey(presented);
    if (!environment) return { status: 'unknown' };
    const record = await this.keys.findByFingerprint(fingerprintKey(this.secret, presented));
    if (!record || record.environment !== environment) return { status: 'unknown' };
    return this.statusOfRecord(record);
  }

  /**
   * What a key known by its id may do now (a key that was deleted is `unknown`): how open
   * sessions learn that their key was revoked or its rotation overlap ended.
   */
  async statusOf(id: string): Promise<KeyLookup> {
    const record = await this.keys.findById(id);
    return record ? this.statusOfRecord(record) : { status: 'unknown' };
  }

  private statusOfRecord(record: ApiKeyRecord): KeyLookup {
    if (record.revokedAt) return { status: 'revoked', record };
    if (record.expiresAt) {
      if (record.expiresAt <= this.now().toISOString()) return { status: 'expired', record };
      return { status: 'superseded', record, stopsWorkingAt: record.expiresAt };
    }
    return { status: 'active', record };
  }

  private async require(id: string): Promise<ApiKeyRecord> {
    const record = await this.keys.findById(id);
    if (!record) throw new KeyManagementError(`no key with id ${id}`);
    return record;
  }
}
