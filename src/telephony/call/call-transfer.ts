/**
 * Handing a caller to a person. Blind transfer asks the caller's side to call the target (REFER,
 * RFC 3515, its progress followed by NOTIFY); a bridged transfer has the gateway call the target
 * itself, with ringback or a waiting prompt for the caller while it rings, and join the two
 * calls' media in the media thread once it answers, until either side hangs up.
 */
import type { Logger } from 'pino';
import type { DigestCredentials } from '../sip/digest.js';
import type { CallCodec } from '../telephony-config.js';
import type { TrunkConfig } from '../trunks/trunk-loader.js';
import type { PromptRequest, TransferOutcome } from '../../dialplan/steps/step-context.js';
import type { MediaChannel } from '../media/media-channel.js';
import { abortableDelay } from './abortable-delay.js';
import { playTone, RINGBACK, RINGBACK_PAUSE_MS } from './tones.js';

/** A second call the gateway placed, answered. */
export interface PlacedLeg {
  readonly media: MediaChannel;
  /** Resolves when the called side hangs up. */
  readonly ended: Promise<void>;
  /** Hangs up the called side and frees its media. */
  hangup(reason?: string): Promise<void>;
}

/** Why a placed call was not answered: a SIP status, or no final answer at all. */
export type PlaceFailure = number | 'timeout' | 'cancelled' | 'unreachable' | 'unsupported';

/** What a bridged transfer asks of the signalling. */
export interface OutboundCall {
  /** The target URI. */
  readonly target: string;
  /** Our From: the caller's, or the step's caller_id. */
  readonly from: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly ringTimeoutMs: number;
  /** A trunk's account, to answer its carrier's 401 or 407. */
  readonly credentials?: DigestCredentials & { readonly realm?: string | null };
  /** The codecs to offer, in order (a trunk's); the deployment's otherwise. */
  readonly codecs?: readonly CallCodec[];
  /** Through a TLS trunk with `tls_ca_file`: the CAs (PEM) its certificate must chain to. */
  readonly tlsCa?: string;
}

/** Places a second call; answered or not. */
export type CallPlacer = (call: OutboundCall, signal: AbortSignal) => Promise<{ readonly answered: PlacedLeg } | { readonly failed: PlaceFailure }>;

/** The outcome of a transfer that did not reach the target, from the SIP status behind it. */
export function failedTransfer(status: PlaceFailure | null): TransferOutcome {
  const code = typeof status === 'number' ? status : null;
  if (status === 486 || status === 600 || status === 603) return { result: 'busy', status: code };
  if (status === 'timeout' || status === 408 || status === 480 || status === 487) return { result: 'no_answer', status: code };
  return { result: 'failed', status: code };
}

/** What a bridged transfer needs of the call. */
export interface BridgeParts {
  readonly media: MediaChannel;
  readonly place: CallPlacer;
  readonly logger: Logger;
  /** Speaks a prompt to the caller, stopped where it is when `stop` aborts. */
  readonly say: (prompt: PromptRequest, stop: AbortSignal) => Promise<unknown>;
}

/**
 * Calls the target and bridges it to the caller. Resolves `bridged` once the bridge is over
 * (either side hung up; the target is hung up when the caller left), or the failure.
 */
export async function bridgedTransfer(
  parts: BridgeParts,
  call: OutboundCall,
  waiting: 'ringback' | PromptRequest,
  callSignal: AbortSignal,
): Promise<TransferOutcome> {
  const ringing = new AbortController();
  const whileRinging = AbortSignal.any([callSignal, ringing.signal]);
  const entertain = (async () => {
    while (!whileRinging.aborted) {
      if (waiting === 'ringback') {
        await playTone(parts.media, RINGBACK, whileRinging);
        await abortableDelay(RINGBACK_PAUSE_MS, whileRinging);
      } else {
        await parts.say(waiting, whileRinging);
        await abortableDelay(1000, whileRinging);
      }
    }
  })();
  let placed: Awaited<ReturnType<CallPlacer>>;
  try {
    placed = await parts.place(call, callSignal);
  } finally {
    ringing.abort();
    await entertain;
  }
  if ('failed' in placed) {
    parts.logger.info({ target: call.target, failed: placed.failed }, 'the bridged call was not answered');
    if (placed.failed === 'unsupported')
      parts.logger.error('bridged transfers need the embedded SIP stack; with drachtio-server only REFER transfers are made');
    return failedTransfer(placed.failed);
  }
  const leg = placed.answered;
  if (callSignal.aborted) {
    await leg.hangup('the caller hung up');
    return { result: 'bridged', status: 200 };
  }
  parts.media.bridge(leg.media);
  parts.logger.info({ target: call.target }, 'bridged');
  await Promise.race([leg.ended, new Promise<void>((resolve) => callSignal.addEventListener('abort', () => resolve(), { once: true }))]);
  parts.media.unbridge();
  if (callSignal.aborted) await leg.hangup('the caller hung up');
  else await leg.hangup();
  return { result: 'bridged', status: 200 };
}

/** Where a transfer goes and what it says, from the step and the call. */
export interface TransferAddressing {
  /** The target as a SIP URI: the Refer-To, and the Request-URI of a bridged call. */
  readonly target: string;
  /** The From of a bridged call. */
  readonly from: string;
  /** The step's X- headers (REFER and bridged INVITE). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The bridged INVITE's headers: the step's, and Diversion when asked for. */
  readonly inviteHeaders: ReadonlyArray<readonly [string, string]>;
  /** Through a trunk: its account for the carrier's challenge. */
  readonly credentials?: DigestCredentials & { readonly realm?: string | null };
  /** Through a trunk: the codecs it takes, in the order to offer them. */
  readonly codecs?: readonly CallCodec[];
  /** Through a TLS trunk with `tls_ca_file`: the CAs (PEM) its certificate must chain to. */
  readonly tlsCa?: string;
}

/** What the call knows that addressing a transfer needs. */
export interface TransferCall {
  /** Where the call's INVITE came from: numbers are sent back there (the PBX or trunk). */
  readonly source: { readonly transport: 'UDP' | 'TCP' | 'TLS'; readonly address: string; readonly port: number };
  readonly callerUri: string;
  readonly called: string;
  /** Our host, for the URIs we make (Caller ID, Diversion). */
  readonly ourHost: string;
}

/** A host for a SIP URI: IPv6 in brackets. */
const uriHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * Addresses a transfer: a number goes to where the call came from (`sip:NUMBER@source`, its
 * transport kept), a SIP URI as written; the Caller ID is the caller's unless the step names
 * one; Diversion (RFC 5806) names the number that was called. Through a trunk, a number goes to
 * the trunk's proxy, our URIs are in the trunk's domain, the Caller ID is the step's, else the
 * trunk's `caller_id`, else its `from_user`, the trunk's account answers challenges, and over
 * TLS the trunk's `tls_ca_file` vouches for its certificate.
 * @returns the addressing, or a problem when the step's target (after its placeholders were filled) is neither
 */
export function addressTransfer(
  request: { readonly target: string; readonly callerId?: string; readonly diversion: boolean; readonly headers: ReadonlyArray<readonly [string, string]> },
  call: TransferCall,
  trunk?: TrunkConfig,
): TransferAddressing | { readonly problem: string } {
  const next = trunk?.proxy ? { transport: trunk.transport, address: trunk.proxy.host, port: trunk.proxy.port } : call.source;
  const transport = next.transport === 'UDP' ? '' : `;transport=${next.transport.toLowerCase()}`;
  const viaNext = (number: string): string => `sip:${number}@${uriHost(next.address)}:${next.port}${transport}`;
  const target = /^sips?:\S+$/i.test(request.target) ? request.target : /^\+?[0-9*#]+$/.test(request.target) ? viaNext(request.target) : null;
  if (target === null) return { problem: `the transfer target ${JSON.stringify(request.target)} is neither a SIP URI nor a number` };
  const domain = trunk?.fromDomain ?? call.ourHost;
  const ours = (number: string): string => (/^sips?:/i.test(number) ? number : `sip:${number}@${uriHost(domain)}`);
  const trunkCallerId = trunk?.callerId ?? trunk?.fromUser ?? undefined;
  const callerId = request.callerId ?? trunkCallerId;
  const from = callerId === undefined ? call.callerUri : ours(callerId);
  const inviteHeaders = request.diversion ? [...request.headers, ['Diversion', `<${ours(call.called)}>;reason=unconditional`] as const] : request.headers;
  const account =
    trunk?.username && trunk.password ? { username: trunk.authUsername ?? trunk.username, password: trunk.password, realm: trunk.realm } : undefined;
  return {
    target,
    from,
    headers: request.headers,
    inviteHeaders,
    ...(account ? { credentials: account } : {}),
    ...(trunk ? { codecs: trunk.codecs } : {}),
    ...(trunk?.tlsCa ? { tlsCa: trunk.tlsCa } : {}),
  };
}
