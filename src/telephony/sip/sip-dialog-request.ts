/**
 * Requests inside a dialog, whichever side made it (RFC 3261 section 12.2.1.1): the dialog's
 * Call-ID, both tags, the remote target as Request-URI and the route set as Route headers, a
 * fresh branch; and our Contact, which 2xx answers and target-refresh requests carry.
 */
import { newBranch, sipHost } from './sip-headers.js';
import { SipHeaders, type SipRequest } from './sip-message.js';
import type { SipPeer } from './sip-transport.js';

/** What a dialog's requests are made of. */
export interface DialogAddressing {
  readonly callId: string;
  /** Our From header value, with our tag. */
  readonly local: string;
  /** Their To header value, with their tag. */
  readonly remote: string;
  /** Where the request is addressed (their Contact). */
  readonly remoteTarget: string;
  /** Route headers, in the order they are written. */
  readonly routeSet: readonly string[];
  /** Our transport and address for the Via. */
  readonly transport: SipPeer['transport'];
  readonly via: { readonly host: string; readonly port: number };
}

/** A request of ours inside a dialog, without a body; `branch` for an ACK that must repeat one. */
export function dialogRequest(dialog: DialogAddressing, method: string, seq: number, branch = newBranch()): SipRequest {
  const headers = new SipHeaders()
    .append('Via', `SIP/2.0/${dialog.transport} ${sipHost(dialog.via.host)}:${dialog.via.port};branch=${branch};rport`)
    .append('Max-Forwards', '70');
  for (const route of dialog.routeSet) headers.append('Route', route);
  headers.append('From', dialog.local).append('To', dialog.remote).append('Call-ID', dialog.callId).append('CSeq', `${seq} ${method}`);
  return { kind: 'request', method, uri: dialog.remoteTarget, headers, body: Buffer.alloc(0) };
}

/** Our Contact header value: the address of this transport, with `transport=` for streams. */
export function contactValue(contact: { readonly host: string; readonly port: number }, transport: SipPeer['transport']): string {
  return `<sip:${sipHost(contact.host)}:${contact.port}${transport === 'UDP' ? '' : `;transport=${transport.toLowerCase()}`}>`;
}
