/**
 * Turns a call order into a plan the dialer can place: who is called at which SIP URI and with
 * which caller ID, through which trunk and with its account and codecs, and what runs once the
 * callee answers (a route of a dialplan file, or a bot step). Everything the caller can get
 * wrong is found here, before anything is sent, and named in the error's detail.
 */
import path from 'node:path';
import { findLanguage, DEFAULT_LANGUAGE } from '../../catalog/languages.js';
import { DEFAULT_VOICE, findVoice } from '../../catalog/voices.js';
import { stepShapeProblem, type LoadedRoute } from '../../dialplan/dialplan-loader.js';
import { addressTransfer, type TransferAddressing } from '../call/call-transfer.js';
import { parseSipUri } from '../sip/sip-headers.js';
import type { SipPeer } from '../sip/sip-transport.js';
import type { TrunkConfig } from '../trunks/trunk-loader.js';
import type { TrunkStatus } from '../trunks/trunk-service.js';
import { CallOrderError, E164, type CallOrder } from './call-order.js';

/** What placing an ordered call needs. */
export interface CallPlan {
  readonly addressing: TransferAddressing;
  /** Where the INVITE goes first (the trunk's proxy, or the target's host): RTP may come from there too. */
  readonly firstHop: SipPeer;
  readonly trunk: TrunkConfig | null;
  readonly route: LoadedRoute;
  readonly runs: { readonly dialplan: string; readonly route: string } | { readonly bot: 'webhook' | 'stream' };
  readonly ringTimeoutMs: number;
}

/** What a plan is made from besides the order. */
export interface PlanContext {
  readonly routes: readonly LoadedRoute[];
  readonly trunks: readonly TrunkConfig[];
  readonly trunkStatus: (name: string) => TrunkStatus | undefined;
  /** Our host, for the caller IDs we write as URIs. */
  readonly ourHost: string;
}

/** Default ring timeout. */
export const DEFAULT_RING_TIMEOUT_S = 30;

const invalid = (detail: string): CallOrderError => new CallOrderError('invalid', detail);

/** A SIP or SIPS URI we can send to, or null. */
function sipUri(value: string): string | null {
  return /^sips?:[^\s<>"]+$/i.test(value) && parseSipUri(value) ? value : null;
}

/** The trunk the order names, checked: known, and not known to be down. */
function orderedTrunk(order: CallOrder, context: PlanContext): TrunkConfig | null {
  if (order.trunk === undefined) return null;
  const trunk = context.trunks.find((candidate) => candidate.name === order.trunk);
  if (!trunk) {
    const names = context.trunks.map((candidate) => candidate.name);
    throw invalid(`no trunk ${JSON.stringify(order.trunk)} in trunks.yaml (${names.length > 0 ? `trunks: ${names.join(', ')}` : 'there are no trunks'})`);
  }
  const status = context.trunkStatus(trunk.name);
  if (status?.registration?.state === 'failed')
    throw new CallOrderError('unavailable', `trunk ${trunk.name} is not registered: ${status.registration.lastError ?? 'its registration failed'}`);
  if (status?.keepalive?.reachable === false)
    throw new CallOrderError('unavailable', `trunk ${trunk.name} does not answer its OPTIONS keep-alive: ${status.keepalive.lastError ?? 'unreachable'}`);
  return trunk;
}

/** The route of the order: a dialplan file's (by its name), or a bot's own. */
function orderedRoute(order: CallOrder, context: PlanContext): Pick<CallPlan, 'route' | 'runs'> {
  if ((order.dialplan === undefined) === (order.bot === undefined)) throw invalid('give either dialplan (with an optional route) or bot');
  if (order.dialplan !== undefined) {
    const wanted = order.dialplan.replace(/\.ya?ml$/, '');
    const inFile = context.routes.filter((route) => path.basename(route.file).replace(/\.ya?ml$/, '') === wanted);
    if (inFile.length === 0) {
      const files = [...new Set(context.routes.map((route) => path.basename(route.file)))];
      throw invalid(`no dialplan ${JSON.stringify(order.dialplan)} in the dialplans folder (files: ${files.join(', ') || 'none'})`);
    }
    const route = order.route === undefined ? inFile[0]! : inFile.find((candidate) => candidate.number === order.route);
    if (!route)
      throw invalid(
        `dialplan ${order.dialplan} has no route ${JSON.stringify(order.route)} (routes: ${inFile.map((candidate) => candidate.number).join(', ')})`,
      );
    return { route, runs: { dialplan: path.basename(route.file), route: route.number } };
  }
  if (order.route !== undefined) throw invalid('route goes with dialplan, not with bot');
  const problem = stepShapeProblem(order.bot);
  if (problem) throw invalid(`bot: ${problem.replace(/^\//, '')}`);
  const kind = 'webhook' in order.bot! ? 'webhook' : 'stream' in order.bot! ? 'stream' : null;
  if (!kind) throw invalid('bot is one webhook or stream step');
  const language = order.language ?? DEFAULT_LANGUAGE;
  if (!findLanguage(language)) throw invalid(`language ${JSON.stringify(language)} is not supported (GET /v1/capabilities lists the languages)`);
  const voice = order.voice ?? DEFAULT_VOICE;
  if (!findVoice(voice)) throw invalid(`voice ${JSON.stringify(voice)} is not known (GET /v1/voices lists them)`);
  const route: LoadedRoute = { file: '(POST /v1/calls)', number: 'api', language, voice, steps: [order.bot!] };
  return { route, runs: { bot: kind } };
}

/**
 * Plans an ordered call.
 * @throws CallOrderError `invalid` for what the order gets wrong, `unavailable` for a trunk that is down
 */
export function planCall(order: CallOrder, context: PlanContext): CallPlan {
  const trunk = orderedTrunk(order, context);
  const uri = sipUri(order.to);
  if (!uri && !E164.test(order.to)) throw invalid(`to ${JSON.stringify(order.to)} is neither an E.164 number (+41441234567) nor a SIP URI`);
  if (!uri && !trunk) throw invalid(`to ${order.to} is a number: name the trunk to call it through`);
  if (order.from !== undefined && !E164.test(order.from) && !sipUri(order.from))
    throw invalid(`from ${JSON.stringify(order.from)} is neither an E.164 number nor a SIP URI`);
  const hop = trunk?.proxy ?? trunk?.registrar ?? null;
  if (trunk && !hop && !uri) throw invalid(`trunk ${trunk.name} has neither proxy nor registrar to send the call to`);
  const uriHost = uri ? parseSipUri(uri)!.host.replace(/^\[|\]$/g, '') : '';
  const source = hop ? { transport: trunk!.transport, address: hop.host, port: hop.port } : { transport: 'UDP' as const, address: uriHost, port: 5060 };
  const addressing = addressTransfer(
    { target: order.to, ...(order.from !== undefined ? { callerId: order.from } : {}), diversion: false, headers: [] },
    { source, callerUri: `sip:sprachrohr@${context.ourHost.includes(':') ? `[${context.ourHost}]` : context.ourHost}`, called: '', ourHost: context.ourHost },
    trunk ?? undefined,
  );
  if ('problem' in addressing) throw invalid(addressing.problem);
  if (order.listen_early_media === true && (order.machine_detection ?? 'off') !== 'off')
    throw invalid('listen_early_media and machine_detection do not go together: the detection needs the answer, the route would start before it');
  const ringTimeoutS = order.ring_timeout_s ?? DEFAULT_RING_TIMEOUT_S;
  return { addressing, firstHop: source, trunk, ...orderedRoute(order, context), ringTimeoutMs: ringTimeoutS * 1000 };
}
