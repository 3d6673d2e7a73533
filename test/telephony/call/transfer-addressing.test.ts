/**
 * Where a transfer goes and what it carries: a number goes back to where the call came from
 * (transport kept, IPv6 in brackets), a SIP URI as written; the Caller ID is the caller's unless
 * the step names one; Diversion names the number that was called; anything else is refused.
 */
import { describe, expect, it } from 'vitest';
import { addressTransfer, failedTransfer } from '../../../src/telephony/call/call-transfer.js';

const call = {
  source: { transport: 'UDP' as const, address: '10.0.0.5', port: 5060 },
  callerUri: 'sip:+41791234567@trunk.example.ch',
  called: '0445550100',
  ourHost: '192.0.2.7',
};
const request = { target: '+41445550111', diversion: false, headers: [['X-Topic', 'stoerung']] as const };

describe('addressing a transfer', () => {
  it('sends a number back to the source of the call, keeping its transport', () => {
    expect(addressTransfer(request, call)).toEqual({
      target: 'sip:+41445550111@10.0.0.5:5060',
      from: 'sip:+41791234567@trunk.example.ch',
      headers: [['X-Topic', 'stoerung']],
      inviteHeaders: [['X-Topic', 'stoerung']],
    });
    const tcp = addressTransfer(request, { ...call, source: { transport: 'TCP', address: '2001:db8::5', port: 5080 } });
    expect(tcp).toMatchObject({ target: 'sip:+41445550111@[2001:db8::5]:5080;transport=tcp' });
  });

  it('takes a SIP URI as written, a caller ID from the step, and adds Diversion to the INVITE only', () => {
    const addressed = addressTransfer({ ...request, target: 'sips:zentrale@pbx.example.ch', callerId: '+41445550100', diversion: true }, call);
    expect(addressed).toEqual({
      target: 'sips:zentrale@pbx.example.ch',
      from: 'sip:+41445550100@192.0.2.7',
      headers: [['X-Topic', 'stoerung']],
      inviteHeaders: [
        ['X-Topic', 'stoerung'],
        ['Diversion', '<sip:0445550100@192.0.2.7>;reason=unconditional'],
      ],
    });
  });

  it('refuses a target that placeholders turned into neither a URI nor a number', () => {
    expect(addressTransfer({ ...request, target: 'team-' }, call)).toEqual({ problem: 'the transfer target "team-" is neither a SIP URI nor a number' });
    expect(addressTransfer({ ...request, target: '' }, call)).toHaveProperty('problem');
  });

  it('names a failure by its SIP status', () => {
    expect(failedTransfer(486)).toEqual({ result: 'busy', status: 486 });
    expect(failedTransfer(603)).toEqual({ result: 'busy', status: 603 });
    expect(failedTransfer('timeout')).toEqual({ result: 'no_answer', status: null });
    expect(failedTransfer(480)).toEqual({ result: 'no_answer', status: 480 });
    expect(failedTransfer('unreachable')).toEqual({ result: 'failed', status: null });
    expect(failedTransfer(500)).toEqual({ result: 'failed', status: 500 });
    expect(failedTransfer(null)).toEqual({ result: 'failed', status: null });
  });
});
