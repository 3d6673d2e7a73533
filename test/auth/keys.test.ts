import { describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import { fingerprintKey } from '../../src/auth/api-key.js';
import { KeyService, ROTATION_OVERLAP_MS } from '../../src/auth/key-service.js';
import { ApiError } from '../../src/api/errors.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const SECRET = 'another-test-secret-of-enough-length!!';

function service(now: () => Date = () => new Date()) {
  const store = SqliteStore.open(':memory:');
  return { store, keys: new KeyService(store.keys, SECRET, now) };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('API keys', () => {
  it('creates keys with the environment prefix and stores only a keyed fingerprint', async () => {
    const { store, keys } = service();
    const live = await keys.create('billing bot', 'live');
    const sandbox = await keys.create('dev', 'sandbox');
    expect(live.key).toMatch(/^sv_[A-Za-z0-9]{32}$/);
    expect(live.key.startsWith('sv_test_')).toBe(false);
    expect(sandbox.key).toMatch(/^sv_test_[A-Za-z0-9]{32}$/);
    const stored = await store.keys.findById(live.record.id);
    expect(stored!.fingerprint).toBe(fingerprintKey(SECRET, live.key));
    expect(JSON.stringify(await store.keys.list())).not.toContain(live.key);
    expect(stored!.displayPrefix).toBe(`${live.key.slice(0, 7)}…`);
  });

  it('authenticates active keys and refuses unknown, malformed and missing ones with 401', async () => {
    const { keys } = service();
    const { key, record } = await keys.create('a', 'sandbox');
    expect(await authenticate(keys, key, 'tts')).toEqual({ keyId: record.id, accountId: 'acct_default', environment: 'sandbox', keyStatus: null });
    for (const presented of [undefined, '', 'sv_test_unknown00000000000000000000', 'Bearer x', `${key}x`]) {
      const error = await refusal(authenticate(keys, presented, 'stt'));
      expect(error.code).toBe('stt.unauthenticated');
      expect(error.httpStatus).toBe(401);
    }
  });

  it('refuses a key whose fingerprint matches under another environment prefix', async () => {
    const { keys } = service();
    const { key } = await keys.create('a', 'live');
    // Same secret part with the sandbox prefix is another key entirely.
    expect((await refusal(authenticate(keys, key.replace('sv_', 'sv_test_'), 'tts'))).code).toBe('tts.unauthenticated');
  });

  it('refuses a revoked key with 403 and cannot revoke twice', async () => {
    const { keys } = service();
    const { key, record } = await keys.create('a', 'live');
    await keys.revoke(record.id);
    const error = await refusal(authenticate(keys, key, 'tts'));
    expect(error).toMatchObject({ code: 'tts.forbidden', httpStatus: 403 });
    expect(error.detail).toMatch(/revoked/);
    await expect(keys.revoke(record.id)).rejects.toThrow(/already revoked/);
    await expect(keys.revoke('key_nope')).rejects.toThrow(/no key with id key_nope/);
  });

  it('rotates with a seven-day overlap, then refuses the old key', async () => {
    let now = new Date('2026-11-21T10:00:00Z');
    const { keys } = service(() => now);
    const original = await keys.create('ivr', 'live');
    const { old, created } = await keys.rotate(original.record.id);
    expect(created.record).toMatchObject({ name: 'ivr', environment: 'live' });
    expect(old.replacedBy).toBe(created.record.id);
    const stops = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
    expect(old.expiresAt).toBe(stops);
    expect(await authenticate(keys, original.key, 'tts')).toMatchObject({ keyStatus: `superseded; stops working ${stops}` });
    expect(await authenticate(keys, created.key, 'tts')).toMatchObject({ keyStatus: null });
    await expect(keys.rotate(original.record.id)).rejects.toThrow(/already rotated/);
    now = new Date(now.getTime() + ROTATION_OVERLAP_MS + 1);
    expect((await refusal(authenticate(keys, original.key, 'stt'))).code).toBe('stt.forbidden');
    expect(await authenticate(keys, created.key, 'stt')).toMatchObject({ keyStatus: null });
  });

  it('ends the overlap on request without touching the successor', async () => {
    const { keys } = service();
    const original = await keys.create('ivr', 'sandbox');
    const { created } = await keys.rotate(original.record.id);
    await keys.endOverlap(original.record.id);
    const error = await refusal(authenticate(keys, original.key, 'tts'));
    expect(error.code).toBe('tts.forbidden');
    expect(error.detail).toMatch(/superseded by rotation/);
    expect(await authenticate(keys, created.key, 'tts')).toMatchObject({ environment: 'sandbox', keyStatus: null });
    await expect(keys.endOverlap(original.record.id)).rejects.toThrow(/already ended/);
    await expect(keys.endOverlap(created.record.id)).rejects.toThrow(/was not rotated/);
  });

  it('keeps keys across a restart of the store', async () => {
    const fs = await import('node:fs/promises');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-store-'));
    const file = path.join(dir, 'store.sqlite');
    const first = SqliteStore.open(file);
    const { key } = await new KeyService(first.keys, SECRET).create('persisted', 'live');
    await first.close();
    const second = SqliteStore.open(file);
    expect(await authenticate(new KeyService(second.keys, SECRET), key, 'tts')).toMatchObject({ environment: 'live' });
    await second.close();
    await fs.rm(dir, { recursive: true });
  });
});
