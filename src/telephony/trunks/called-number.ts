import { parseNameAddress, parseSipUri } from '../sip/sip-headers.js';
import type { SipRequest } from '../sip/sip-message.js';
import type { TrunkConfig } from './trunk-loader.js';

/**
 * The number a call is routed by: the Request-URI's user, as always; but a trunk that reaches
 * the gateway through its registration sends the call to the registered Contact, whose user is
 * the trunk's `username`, and names the number dialled (the DID) in To — then To's user.
 */
export function calledNumberOf(invite: SipRequest, requestUser: string | null, trunk: TrunkConfig | undefined): string {
  if (!trunk?.username || requestUser !== trunk.username) return requestUser ?? '';
  const to = parseNameAddress(invite.headers.get('To') ?? '');
  const dialled = to ? parseSipUri(to.uri)?.user : undefined;
  return dialled ?? requestUser;
}
