/**
 * Responses a scripted peer writes to the requests the gateway sends it (BYE, REFER, INVITE):
 * the request's Via, From, To (with the peer's tag added when given), Call-ID and CSeq, an
 * optional Contact and SDP body.
 */
import type { SipRequest } from '../../src/telephony/sip/sip-message.js';

/** The text of a response to `sent`. */
export function responseText(sent: SipRequest, status: number, options: { reason?: string; toTag?: string; contact?: string; sdp?: string } = {}): string {
  const body = options.sdp ?? '';
  return [
    `SIP/2.0 ${status} ${options.reason ?? 'Whatever'}`,
    `Via: ${sent.headers.get('Via')}`,
    `From: ${sent.headers.get('From')}`,
    `To: ${sent.headers.get('To')}${options.toTag ? `;tag=${options.toTag}` : ''}`,
    `Call-ID: ${sent.headers.get('Call-ID')}`,
    `CSeq: ${sent.headers.get('CSeq')}`,
    ...(options.contact ? [`Contact: ${options.contact}`] : []),
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}
