import { parseArgs } from 'node:util';
import { KeyManagementError } from '../auth/key-service.js';
import { loadConfig } from '../config.js';
import { openKeyStore } from '../server.js';
import { entitlementView } from '../entitlements/entitlement-view.js';
import type { AccountRecord, ApiKeyRecord, EntitlementRecord } from '../store/store.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr accounts`. */
export const ACCOUNTS_HELP = `sprachrohr accounts — manage the accounts keys act for

Usage:
  sprachrohr accounts create NAME [--email ADDRESS]... [--no-evaluation] [--json]
  sprachrohr accounts list [--json]
  sprachrohr accounts show NAME [--json]
  sprachrohr accounts set-emails NAME [--email ADDRESS]...
  sprachrohr accounts rotate-secret NAME [--json]

create         Makes an account (name: a-z, 0-9, ".", "_", "-") with the evaluation
               allowance of SPRACHROHR_EVALUATION_SECONDS (default 3600 s, both
               directions, hard cap), or none with --no-evaluation. Keys join it
               with sprachrohr keys create --account NAME.
list           Shows every account: name, id, keys, created.
show           Shows one account with its keys, its entitlements and, with --json, its webhook_secret:
               the secret that signs its job callbacks (X-Speech-Webhook-Signature).
set-emails     Replaces the addresses the account's notices go to (none: no --email).
rotate-secret  Makes a new webhook secret; the old one stops signing at once.

Keys made without --account belong to the account "default".
Works on SPRACHROHR_DATABASE_URL (PostgreSQL) when set, else on the data folder
of SPRACHROHR_DATA_DIR (default ./data), also while the gateway runs.
`;

function describe(account: AccountRecord, keys: readonly ApiKeyRecord[], withSecret: boolean, entitlements?: readonly EntitlementRecord[]): object {
  return {
    id: account.id,
    name: account.name,
    created_at: account.createdAt,
    emails: account.emails,
    keys: keys.filter((key) => key.accountId === account.id).map((key) => ({ id: key.id, name: key.name, environment: key.environment })),
    ...(entitlements ? { entitlements: entitlements.map(entitlementView) } : {}),
    ...(withSecret ? { webhook_secret: account.webhookSecret } : {}),
  };
}

/** Runs an `accounts` subcommand; returns what to print. */
export async function accountsCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string', multiple: true, default: [] },
      'no-evaluation': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, name] = positionals;
  if (!action) throw new UsageError('name a subcommand: create, list, show, set-emails or rotate-secret');
  if (action !== 'list' && !name) throw new UsageError(`accounts ${action} needs an account NAME`);
  const config = loadConfig(io.env);
  const { store, keys, accounts, entitlements } = await openKeyStore(config);
  try {
    switch (action) {
      case 'create': {
        const account = await accounts.create(name!, values.email);
        const seconds = values['no-evaluation'] ? 0 : config.evaluationSeconds;
        const granted = seconds > 0 ? [await entitlements.add(account.id, { kind: 'evaluation', seconds })] : [];
        if (values.json) return JSON.stringify(describe(account, [], true, granted), null, 2);
        const allowance = seconds > 0 ? `an evaluation allowance of ${seconds} s` : 'no entitlements (its use is not capped)';
        return `Created account ${account.name} (${account.id}) with ${allowance}.\nMake its keys with: sprachrohr keys create --name NAME --env live --account ${account.name}`;
      }
      case 'list': {
        const all = await accounts.list();
        const allKeys = await keys.list();
        if (values.json)
          return JSON.stringify(
            all.map((account) => describe(account, allKeys, false)),
            null,
            2,
          );
        return all
          .map((account) => {
            const count = allKeys.filter((key) => key.accountId === account.id).length;
            return [account.name.padEnd(20), account.id, `${count} key${count === 1 ? '' : 's'}`.padEnd(8), account.createdAt].join('  ');
          })
          .join('\n');
      }
      case 'show': {
        const account = await accounts.byName(name!);
        const held = await entitlements.list(account.id);
        const described = describe(account, await keys.list(), values.json, held) as { keys: Array<{ id: string; name: string; environment: string }> };
        if (values.json) return JSON.stringify(described, null, 2);
        const lines = [`${account.name} (${account.id}), created ${account.createdAt}`, `notices to: ${account.emails.join(', ') || 'nobody'}`];
        lines.push(...(described.keys.length === 0 ? ['no keys'] : described.keys.map((key) => `key ${key.id}  ${key.environment.padEnd(7)}  ${key.name}`)));
        lines.push(
          `entitlements: ${held.length === 0 ? 'none (use not capped)' : held.map((entitlement) => `#${entitlement.id} ${entitlement.kind}`).join(', ')} (sprachrohr entitlements list --account ${account.name})`,
        );
        lines.push('webhook secret: shown with --json');
        return lines.join('\n');
      }
      case 'set-emails': {
        const account = await accounts.setEmails(name!, values.email);
        return `Notices of ${account.name} go to: ${account.emails.join(', ') || 'nobody'}.`;
      }
      case 'rotate-secret': {
        const account = await accounts.rotateSecret(name!);
        if (values.json) return JSON.stringify({ name: account.name, webhook_secret: account.webhookSecret }, null, 2);
        return `New webhook secret for ${account.name}; see it with: sprachrohr accounts show ${account.name} --json`;
      }
      default:
        throw new UsageError(`unknown subcommand "${action}"; use create, list, show, set-emails or rotate-secret`);
    }
  } catch (error) {
    if (error instanceof KeyManagementError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}
