import { parseArgs } from 'node:util';
import { KeyManagementError } from '../auth/key-service.js';
import { loadConfig } from '../config.js';
import { openKeyStore } from '../server.js';
import type { UsageSummaryRow } from '../store/store.js';
import { billableSeconds, usageReport } from '../usage/usage-report.js';
import { InvalidWindowError, usageWindow } from '../usage/usage-window.js';
import { entitlementView } from '../entitlements/entitlement-view.js';
import { describeLine } from './entitlements.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr usage`. */
export const USAGE_HELP = `sprachrohr usage — what an account used, from the billing ledger

Usage:
  sprachrohr usage --account NAME [--from DATE] [--to DATE] [--csv]

--account  the account (sprachrohr accounts list)
--from     start: a date (2026-11-01, midnight UTC) or a date-time with offset;
           default the start of the current month (UTC)
--to       end: a date (the whole of that day) or a date-time; default now
--csv      one line per UTC day, environment, direction and mode:
           date,environment,direction,mode,requests,audio_seconds,billable_seconds

Without --csv: the window's lines per direction and mode (live traffic, billed),
the billable total, the sandbox traffic (never billed), as GET /v1/usage reports
them, and the account's entitlements as they stand now.
Works on SPRACHROHR_DATABASE_URL (PostgreSQL) when set, else on the data folder
of SPRACHROHR_DATA_DIR (default ./data), also while the gateway runs.
`;

/** The CSV of the ledger's sums, a line per day, environment, direction and mode. */
function csvOf(rows: readonly UsageSummaryRow[]): string {
  const lines = ['date,environment,direction,mode,requests,audio_seconds,billable_seconds'];
  for (const row of rows) {
    const audio = Math.round(row.audioSeconds * 1000) / 1000;
    lines.push([row.day, row.environment, row.direction, row.mode, row.requests, audio, row.environment === 'live' ? billableSeconds(audio) : 0].join(','));
  }
  return lines.join('\n');
}

/** Runs `sprachrohr usage`; returns what to print. */
export async function usageCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { account: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, csv: { type: 'boolean', default: false } },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.account) throw new UsageError('name the account with --account NAME');
  let window;
  try {
    window = usageWindow(values.from, values.to, new Date());
  } catch (error) {
    if (error instanceof InvalidWindowError) throw new UsageError(error.message);
    throw error;
  }
  const { store, accounts } = await openKeyStore(loadConfig(io.env));
  try {
    const account = await accounts.byName(values.account);
    const rows = await store.usage.summary(account.id, window.from.toISOString(), window.to.toISOString());
    if (values.csv) return csvOf(rows);
    const held = (await store.entitlements.list(account.id)).map(entitlementView);
    const report = usageReport('cli', window, rows, false, held);
    const lines = [
      `${account.name} (${account.id}), ${report.window.from} to ${report.window.to}`,
      'direction  mode      requests  audio seconds  billable seconds',
      ...report.window.breakdown.map((line) =>
        [
          line.direction.padEnd(9),
          line.mode.padEnd(8),
          String(line.requests).padStart(8),
          line.audio_seconds.toFixed(3).padStart(13),
          String(line.billable_seconds).padStart(16),
        ].join('  '),
      ),
      `billable in all: ${report.window.total_billable_seconds} s`,
      `sandbox (never billed): ${report.window.sandbox.requests} requests, ${report.window.sandbox.audio_seconds.toFixed(3)} s of audio`,
      ...(held.length === 0 ? ['entitlements: none (use not capped)'] : ['entitlements now:', ...held.map((view) => `  ${describeLine(view)}`)]),
    ];
    return lines.join('\n');
  } catch (error) {
    if (error instanceof KeyManagementError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}
