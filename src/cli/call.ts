import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CallBody, CallOrderBody } from '../api/call-schemas.js';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS, type ClientFlags } from './api-client.js';
import { processIo, type CommandIo } from './command-io.js';
import { CommandFailure } from './command-failure.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr call`. */
export const CALL_HELP = `sprachrohr call — place a call from a running gateway and follow it

Usage:
  sprachrohr call TO --dialplan FILE [--route R] [--trunk T] [options]

TO is an E.164 number (+41441234567, through --trunk) or a SIP URI. Once the
callee answers, the route R (default: the first) of the dialplan FILE runs;
FILE names a file of the gateway's dialplans folder (its name is sent, the
gateway runs its own copy). Asks the running gateway (POST /v1/calls) with a
live key, then shows the call's progress until it is over; exits 1 when the
call failed (busy, declined, no answer, …).

  --trunk T          the trunk of trunks.yaml to call through
  --from NUMBER      the caller ID (default: the trunk's caller_id)
  --var NAME=VALUE   a {{variable}} of the route (repeatable)
  --ring-timeout S   seconds it may ring (default 30)
  --amd MODE         answering-machine detection: detect or detect_message_end
  --no-wait          print the call's id once it is placed, do not follow it
  --json             the call as the API shows it at the end
${CLIENT_HELP}
`;

/** How often the call is looked at while it is followed. */
const POLL_MS = 250;

/** The order the options make. */
function orderOf(to: string, values: Record<string, string | boolean | string[] | undefined>): CallOrderBody {
  const dialplan = values['dialplan'];
  if (typeof dialplan !== 'string') throw new UsageError('give the dialplan to run once answered: --dialplan FILE');
  const variables: Record<string, string> = {};
  for (const pair of (values['var'] as string[] | undefined) ?? []) {
    const match = /^([a-z_][a-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) throw new UsageError(`--var takes NAME=VALUE with a lower-case name, got ${JSON.stringify(pair)}`);
    variables[match[1]!] = match[2]!;
  }
  const ring = values['ring-timeout'];
  if (ring !== undefined && !/^\d+$/.test(String(ring))) throw new UsageError(`--ring-timeout takes whole seconds, got ${JSON.stringify(ring)}`);
  const amd = values['amd'];
  if (amd !== undefined && amd !== 'detect' && amd !== 'detect_message_end')
    throw new UsageError(`--amd is detect or detect_message_end, got ${JSON.stringify(amd)}`);
  return {
    to,
    dialplan: path.basename(dialplan),
    ...(typeof values['route'] === 'string' ? { route: values['route'] } : {}),
    ...(typeof values['trunk'] === 'string' ? { trunk: values['trunk'] } : {}),
    ...(typeof values['from'] === 'string' ? { from: values['from'] } : {}),
    ...(Object.keys(variables).length > 0 ? { variables } : {}),
    ...(ring !== undefined ? { ring_timeout_s: Number(ring) } : {}),
    ...(amd !== undefined ? { machine_detection: amd } : {}),
  };
}

/** A state's line: what happened, with the SIP cause or the machine detection when known. */
function describe(call: CallBody): string {
  switch (call.state) {
    case 'failed':
      return `failed: ${call.cause ?? 'unknown'}${call.sip_status !== null ? ` (${call.sip_status})` : ''}`;
    case 'answered':
      return call.amd ? `answered (${call.amd.result} after ${call.amd.after_ms} ms)` : 'answered';
    case 'completed':
      return `completed after ${call.duration_s ?? 0} s, ended by ${call.ended_by ?? 'the gateway'}${call.amd ? ` (${call.amd.result})` : ''}`;
    default:
      return call.state;
  }
}

/** Follows the call until it is over, writing each change of state to stderr. */
async function follow(flags: ClientFlags, first: CallBody, io: CommandIo): Promise<CallBody> {
  let call = first;
  let shown = '';
  for (;;) {
    const line = describe(call);
    if (line !== shown) {
      io.stderr.write(`${call.id}  ${line}\n`);
      shown = line;
    }
    if (call.state === 'completed' || call.state === 'failed') return call;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    call = (await (await callApi(flags, `/calls/${call.id}`, { method: 'GET' }, io.env)).json()) as CallBody;
  }
}

/** Runs `sprachrohr call` (with the process's streams and environment unless given others). */
export async function callCommand(argv: string[], io: CommandIo = processIo()): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...CLIENT_OPTIONS,
      dialplan: { type: 'string' },
      route: { type: 'string' },
      trunk: { type: 'string' },
      from: { type: 'string' },
      var: { type: 'string', multiple: true },
      'ring-timeout': { type: 'string' },
      amd: { type: 'string' },
      'no-wait': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const [to, ...extra] = positionals;
  if (!to) throw new UsageError('give the number or SIP URI to call');
  if (extra.length > 0) throw new UsageError(`unexpected ${JSON.stringify(extra[0])}`);
  const response = await callApi(
    values,
    '/calls',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(orderOf(to, values)),
    },
    io.env,
  );
  const placed = (await response.json()) as CallBody;
  if (values['no-wait']) return values.json ? JSON.stringify(placed, null, 2) : placed.id;
  const over = await follow(values, placed, io);
  if (over.state === 'failed') throw new CommandFailure(`the call to ${over.to} ${describe(over)}`);
  return values.json ? JSON.stringify(over, null, 2) : `${over.id}  ${describe(over)}`;
}
