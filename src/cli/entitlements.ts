import { parseArgs } from 'node:util';
import { KeyManagementError } from '../auth/key-service.js';
import { loadConfig } from '../config.js';
import { entitlementView, type EntitlementView } from '../entitlements/entitlement-view.js';
import type { EntitlementRequest } from '../entitlements/entitlement-service.js';
import { openKeyStore } from '../server.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr entitlements`. */
export const ENTITLEMENTS_HELP = `sprachrohr entitlements — what an account may use

Usage:
  sprachrohr entitlements add --account NAME --kind evaluation|committed|credit
        [--direction tts|stt|any] (--seconds N | --credits N) [--valid-until DATE]
        [--enforcement hard|soft] [--json]
  sprachrohr entitlements list --account NAME [--json]
  sprachrohr entitlements top-up ID --credits N
  sprachrohr entitlements remove ID

Kinds (spec 2.9):
  evaluation  free audio seconds; a hard cap: work is refused, and cut off,
              with 429 *.entitlement_exhausted once they are used
  committed   agreed seconds, trued up afterwards: never refuses
  credit      prepaid credits; each second of audio draws
              SPRACHROHR_CREDITS_PER_TTS_SECOND or _STT_SECOND credits (default 1);
              used up, new work is refused until topped up, work in progress
              completes; notices at 80 % and 95 % used
Live traffic draws free minutes first, then credit, then the commitment; an
account without entitlements is not capped. A new account gets an evaluation of
SPRACHROHR_EVALUATION_SECONDS (default 3600) unless made with --no-evaluation.
--enforcement soft makes an evaluation or credit never refuse. --valid-until
takes a date (valid through that day, UTC) or a date-time with offset.
Works on SPRACHROHR_DATABASE_URL (PostgreSQL) when set, else on the data folder
of SPRACHROHR_DATA_DIR (default ./data), also while the gateway runs.
`;

/** One line of a listing. */
export function describeLine(view: EntitlementView): string {
  const amount =
    'unit' in view
      ? `${view.used_credits} of ${view.granted_credits} credits used (${view.used_percent ?? 0} %), ${view.remaining_credits} left`
      : `${view.used_seconds} of ${view.granted_seconds} s used, ${view.remaining_seconds} s left`;
  return [
    `#${view.id}`,
    view.kind.padEnd(10),
    view.direction.padEnd(3),
    view.enforcement.padEnd(4),
    amount,
    view.valid_until ? `until ${view.valid_until}` : 'no end',
  ].join('  ');
}

function number(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`${option} takes a number, not ${JSON.stringify(value)}`);
  return Number(value);
}

/** Runs an `entitlements` subcommand; returns what to print. */
export async function entitlementsCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      kind: { type: 'string' },
      direction: { type: 'string' },
      seconds: { type: 'string' },
      credits: { type: 'string' },
      'valid-until': { type: 'string' },
      enforcement: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, id] = positionals;
  if (!action) throw new UsageError('name a subcommand: add, list, top-up or remove');
  if ((action === 'add' || action === 'list') && !values.account) throw new UsageError(`entitlements ${action} needs --account NAME`);
  if ((action === 'top-up' || action === 'remove') && !/^\d+$/.test(id ?? ''))
    throw new UsageError(`entitlements ${action} needs the entitlement's ID (a number; see entitlements list)`);
  const { store, accounts, entitlements } = await openKeyStore(loadConfig(io.env));
  try {
    switch (action) {
      case 'add': {
        const account = await accounts.byName(values.account!);
        if (values.seconds === undefined && values.credits === undefined) throw new UsageError('entitlements add needs --seconds N or --credits N');
        const added = await entitlements.add(account.id, {
          kind: values.kind as EntitlementRequest['kind'],
          ...(values.direction !== undefined ? { direction: values.direction as EntitlementRequest['direction'] & string } : {}),
          ...(values.seconds !== undefined ? { seconds: number(values.seconds, '--seconds')! } : {}),
          ...(values.credits !== undefined ? { credits: number(values.credits, '--credits')! } : {}),
          ...(values['valid-until'] !== undefined ? { validUntil: values['valid-until'] } : {}),
          ...(values.enforcement !== undefined ? { enforcement: values.enforcement as EntitlementRequest['enforcement'] & string } : {}),
        });
        const view = entitlementView(added);
        return values.json ? JSON.stringify(view, null, 2) : `Added to ${account.name}: ${describeLine(view)}`;
      }
      case 'list': {
        const account = await accounts.byName(values.account!);
        const views = (await entitlements.list(account.id)).map(entitlementView);
        if (values.json) return JSON.stringify(views, null, 2);
        return views.length === 0 ? `${account.name} has no entitlements: its use is not capped.` : views.map(describeLine).join('\n');
      }
      case 'top-up': {
        const credits = number(values.credits, '--credits');
        if (credits === undefined) throw new UsageError('entitlements top-up needs --credits N');
        return `Topped up: ${describeLine(entitlementView(await entitlements.topUp(Number(id), credits)))}`;
      }
      case 'remove':
        return `Removed entitlement #${(await entitlements.remove(Number(id))).id}; it is no longer drawn from.`;
      default:
        throw new UsageError(`unknown subcommand "${action}"; use add, list, top-up or remove`);
    }
  } catch (error) {
    if (error instanceof KeyManagementError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}
