import { parseArgs } from 'node:util';
import type { TrunkList } from '../api/trunk-schemas.js';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS } from './api-client.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr trunks`. */
export const TRUNKS_HELP = `sprachrohr trunks — the SIP trunks of a running gateway

Usage:
  sprachrohr trunks status [--json] [--url URL] [--key KEY]

status  each trunk of trunks.yaml (beside the dialplans) with its registration:
        registered until when, or failing with what and when it tries again.
        Asks the running gateway (GET /v1/trunks) with a live key.
  --json         the API's answer as it is
${CLIENT_HELP}
`;

/** What the OPTIONS keep-alive found, as the end of a trunk's line. */
function reachability(keepalive: TrunkList['trunks'][number]['keepalive']): string {
  if (!keepalive || keepalive.reachable === null) return '';
  return keepalive.reachable ? `  reachable (${keepalive.round_trip_ms} ms)` : `  unreachable: ${keepalive.last_error}`;
}

/** A trunk's line: name, where it registers, and how that stands. */
function lineOf(trunk: TrunkList['trunks'][number]): string {
  const where = `${trunk.registrar ?? trunk.proxy ?? '-'} (${trunk.transport})`;
  const registration = trunk.registration;
  if (!registration) return `${trunk.name}  ${where}  does not register${reachability(trunk.keepalive)}`;
  const parts = [`${trunk.name}  ${where}  ${registration.state}`];
  if (registration.state === 'registered' && registration.expires_at) parts.push(`until ${registration.expires_at}`);
  if (registration.last_error) parts.push(`last error: ${registration.last_error} (${registration.failures} in a row)`);
  if (registration.next_attempt_at && registration.state !== 'registered') parts.push(`next attempt ${registration.next_attempt_at}`);
  return parts.join('  ') + reachability(trunk.keepalive);
}

/** Runs `sprachrohr trunks`. */
export async function trunksCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { ...CLIENT_OPTIONS, json: { type: 'boolean' } } });
  const [action, ...extra] = positionals;
  if (action !== 'status') throw new UsageError(action ? `unknown action "${action}"; the action is status` : 'give an action: status');
  if (extra.length > 0) throw new UsageError(`unexpected ${JSON.stringify(extra[0])}`);
  const response = await callApi(values, '/trunks', { method: 'GET' }, io.env);
  const body = (await response.json()) as TrunkList;
  if (values.json) return JSON.stringify(body, null, 2);
  if (body.sip === 'off') return 'calls are off on this gateway (SPRACHROHR_SIP=off): no trunks';
  if (body.trunks.length === 0) return 'no trunks (no trunks.yaml beside the dialplans)';
  return body.trunks.map(lineOf).join('\n');
}
