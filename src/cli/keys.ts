import { parseArgs } from 'node:util';
import { KeyManagementError } from '../auth/key-service.js';
import { loadConfig } from '../config.js';
import { openKeyStore } from '../server.js';
import type { ApiKeyRecord } from '../store/store.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr keys`. */
export const KEYS_HELP = `sprachrohr keys — manage API keys in the embedded store

Usage:
  sprachrohr keys create --name NAME [--env live|sandbox] [--account NAME] [--json]
  sprachrohr keys list [--json]
  sprachrohr keys revoke KEY_ID
  sprachrohr keys rotate KEY_ID [--json]
  sprachrohr keys rotate --end-overlap KEY_ID

create       Makes a key (sv_… for live, sv_test_… for sandbox; default sandbox)
             for an account (default: the account "default").
             The key is printed once; only a keyed fingerprint is stored.
list         Shows every key: id, environment, prefix, state, account, name.
revoke       Stops a key at once (requests get 403 *.forbidden).
rotate       Makes a successor key; the old key keeps working for seven days and
             every response made with it carries X-Speech-Key-Status.
--end-overlap  Ends a rotation's overlap now; the successor is unaffected.

Works on SPRACHROHR_DATABASE_URL (PostgreSQL) when set, else on the data folder
of SPRACHROHR_DATA_DIR (default ./data), also while the gateway runs.
`;

function stateOf(record: ApiKeyRecord, now: string): string {
  if (record.revokedAt) return `revoked ${record.revokedAt}`;
  if (record.expiresAt) return record.expiresAt <= now ? `superseded, stopped ${record.expiresAt}` : `superseded, stops ${record.expiresAt}`;
  return 'active';
}

function describe(record: ApiKeyRecord, account: string): object {
  return {
    id: record.id,
    account,
    name: record.name,
    environment: record.environment,
    prefix: record.displayPrefix,
    created_at: record.createdAt,
    state: stateOf(record, new Date().toISOString()),
    replaced_by: record.replacedBy,
  };
}

/** Runs a `keys` subcommand; returns what to print. */
export async function keysCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      account: { type: 'string' },
      env: { type: 'string', default: 'sandbox' },
      json: { type: 'boolean', default: false },
      'end-overlap': { type: 'boolean', default: false },
    },
  });
  const [action, id] = positionals;
  if (!action) throw new UsageError('name a subcommand: create, list, revoke or rotate');
  if (values.env !== 'live' && values.env !== 'sandbox') throw new UsageError(`--env must be live or sandbox, not ${values.env}`);
  const environment = values.env;
  const { store, keys, accounts } = await openKeyStore(loadConfig(io.env));
  try {
    const accountNames = new Map((await accounts.list()).map((account) => [account.id, account.name]));
    const describeKey = (record: ApiKeyRecord) => describe(record, accountNames.get(record.accountId) ?? record.accountId);
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('keys create needs --name');
        const account = values.account === undefined ? undefined : await accounts.byName(values.account);
        const { record, key } = await keys.create(values.name, environment, account?.id);
        if (values.json) return JSON.stringify({ ...describeKey(record), key }, null, 2);
        return `Created ${record.environment} key ${record.id} (${record.name}) for account ${accountNames.get(record.accountId)}.\nKey (shown once, store it now):\n${key}`;
      }
      case 'list': {
        const all = await keys.list();
        if (values.json) return JSON.stringify(all.map(describeKey), null, 2);
        if (all.length === 0) return 'No keys yet. Create one with: sprachrohr keys create --name NAME --env sandbox';
        const now = new Date().toISOString();
        return all
          .map((r) =>
            [r.id, r.environment.padEnd(7), r.displayPrefix.padEnd(16), stateOf(r, now), accountNames.get(r.accountId) ?? r.accountId, r.name].join('  '),
          )
          .join('\n');
      }
      case 'revoke': {
        if (!id) throw new UsageError('keys revoke needs a KEY_ID');
        const record = await keys.revoke(id);
        return `Revoked ${record.id} (${record.name}).`;
      }
      case 'rotate': {
        if (!id) throw new UsageError('keys rotate needs a KEY_ID');
        if (values['end-overlap']) {
          const record = await keys.endOverlap(id);
          return `Ended the overlap: ${record.id} stopped working at ${record.expiresAt}.`;
        }
        const { old, created } = await keys.rotate(id);
        if (values.json) return JSON.stringify({ old: describeKey(old), new: { ...describeKey(created.record), key: created.key } }, null, 2);
        return `Rotated ${old.id}: it keeps working until ${old.expiresAt}.\nNew key ${created.record.id} (shown once, store it now):\n${created.key}`;
      }
      default:
        throw new UsageError(`unknown subcommand "${action}"; use create, list, revoke or rotate`);
    }
  } catch (error) {
    if (error instanceof KeyManagementError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}
