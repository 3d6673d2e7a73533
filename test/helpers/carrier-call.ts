/**
 * A call placed through a trunk the way `POST /v1/calls` places it, to a SIPp callee behind the
 * carrier (`api-callee.uas.xml`: answers after early media, listens 2.5 s, hangs up), with the
 * RTP the callee's media port received; and the reminder route such a call runs (also the
 * route of `sprachrohr call`'s test). Shared by the Kamailio carrier tests (UDP and TLS).
 */
import type { PlacedCallRecord } from '../../src/telephony/outbound/placed-call-record.js';
import type { TelephonyService } from '../../src/telephony/telephony-service.js';
import { eventually } from './eventually.js';
import { assertSippPassed, sippScenario, startRtpSink, startSippServer, type ReceivedRtp } from './sipp.js';

/** The route a call through the carrier runs: `reminder`, a Swiss German announcement, then hang up. */
export function reminderDialplan(text: string): string {
  return [
    'name: reminder',
    'routes:',
    '  - number: reminder',
    '    engines: synthetic',
    '    language: de-CH',
    '    voice: anna',
    '    steps:',
    `      - say: { text: ${JSON.stringify(text)} }`,
    '      - hangup: {}',
  ].join('\n');
}

/**
 * Calls `to` through `trunk` on the `reminder` route; the callee (SIPp) listens on `calleePort`,
 * where the carrier sends the call. Resolves once the call is over and SIPp passed, with the
 * call's record and the RTP packets the callee's media port received.
 */
export async function callThroughCarrier(
  service: TelephonyService,
  { to, trunk, calleePort }: { readonly to: string; readonly trunk: string; readonly calleePort: number },
): Promise<{ record: PlacedCallRecord; packets: readonly ReceivedRtp[] }> {
  const sink = await startRtpSink();
  try {
    const callee = await startSippServer({
      scenario: sippScenario('api-callee.uas.xml'),
      localPort: calleePort,
      calls: 1,
      timeoutMs: 20_000,
      variables: { rtp_port: String(sink.port) },
    });
    const record = await service.dialer.place({ to, trunk, dialplan: 'reminder' }, { keyId: 'key_ops', accountId: 'ops' });
    await eventually(() => record.state === 'completed' || record.state === 'failed', 15_000, 'the call to be over');
    assertSippPassed(await callee.result);
    return { record, packets: [...sink.packets] };
  } finally {
    await sink.close();
  }
}
