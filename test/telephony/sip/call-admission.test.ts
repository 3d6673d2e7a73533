/** Who may call: allow-list, digest authentication (MD5 and SHA-256), call limits. */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CallAdmission } from '../../../src/telephony/sip/call-admission.js';
import type { SipDialog } from '../../../src/telephony/sip/sip-dialog.js';
import { SipHeaders, type SipRequest } from '../../../src/telephony/sip/sip-message.js';
import type { SipPeer } from '../../../src/telephony/sip/sip-transport.js';

const from = (address: string): SipPeer => ({ transport: 'UDP', address, port: 5060 });

function invite(authorization?: string): SipRequest {
  const headers = new SipHeaders([
    ['Via', 'SIP/2.0/UDP 10.1.2.3;branch=z9hG4bK-1'],
    ['From', '<sip:trunk@10.1.2.3>;tag=1'],
    ['To', '<sip:100@gw>'],
    ['Call-ID', 'c1'],
    ['CSeq', '1 INVITE'],
  ]);
  if (authorization) headers.append('Authorization', authorization);
  return { kind: 'request', method: 'INVITE', uri: 'sip:100@gw;transport=udp', headers, body: Buffer.alloc(0) };
}

/** A client's digest answer to a challenge, computed as RFC 3261 / RFC 8760 say. */
function answer(challenge: string, options: { user?: string; password?: string; algorithm: 'MD5' | 'SHA-256' }): string {
  const nonce = /nonce="([^"]+)"/.exec(challenge)![1]!;
  const realm = /realm="([^"]+)"/.exec(challenge)![1]!;
  const hash = (text: string) =>
    createHash(options.algorithm === 'MD5' ? 'md5' : 'sha256')
      .update(text)
      .digest('hex');
  const user = options.user ?? 'trunk';
  const uri = 'sip:100@gw;transport=udp';
  const ha1 = hash(`${user}:${realm}:${options.password ?? 'geheim'}`);
  const ha2 = hash(`INVITE:${uri}`);
  const response = hash(`${ha1}:${nonce}:00000001:c0ffee:auth:${ha2}`);
  return `Digest username="${user}", realm="${realm}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=${options.algorithm}, qop=auth, nc=00000001, cnonce="c0ffee"`;
}

const fakeDialog = () => new EventEmitter() as unknown as SipDialog;

describe('call admission', () => {
  it('lets in only sources on the allow-list (IPv4, IPv6, IPv4-mapped), refusing others with 403', () => {
    const admission = new CallAdmission({ allow: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'], maxCalls: 10, maxCallsPerSource: 10 });
    expect(admission.check(invite(), from('10.1.2.3'))).toBeNull();
    expect(admission.check(invite(), from('::ffff:10.9.9.9'))).toBeNull();
    expect(admission.check(invite(), from('2001:db8::5'))).toBeNull();
    expect(admission.check(invite(), from('192.0.2.7'))).toBeNull();
    expect(admission.check(invite(), from('192.0.2.8'))).toEqual({ status: 403 });
    expect(admission.check(invite(), from('2001:db9::5'))).toEqual({ status: 403 });
  });

  it('refuses allow-list entries that are not addresses or ranges', () => {
    expect(() => new CallAdmission({ allow: ['10.0.0.0/33'], maxCalls: 1, maxCallsPerSource: 1 })).toThrow(/prefix length/);
    expect(() => new CallAdmission({ allow: ['trunk.example.ch'], maxCalls: 1, maxCallsPerSource: 1 })).toThrow(/not an IP address/);
  });

  it('challenges with SHA-256 and MD5 and accepts a right answer in either', () => {
    const admission = new CallAdmission({
      allow: ['10.0.0.0/8'],
      digest: { realm: 'sprachrohr', user: 'trunk', password: 'geheim' },
      maxCalls: 10,
      maxCallsPerSource: 10,
    });
    const refusal = admission.check(invite(), from('10.1.2.3'));
    expect(refusal?.status).toBe(401);
    const challenges = refusal!.headers!.filter(([name]) => name === 'WWW-Authenticate').map(([, value]) => value);
    expect(challenges).toHaveLength(2);
    expect(challenges[0]).toMatch(/algorithm=SHA-256/);
    for (const algorithm of ['SHA-256', 'MD5'] as const) {
      const challenge = challenges.find((value) => value.includes(`algorithm=${algorithm}`))!;
      expect(admission.check(invite(answer(challenge, { algorithm })), from('10.1.2.3'))).toBeNull();
      expect(admission.check(invite(answer(challenge, { algorithm, password: 'falsch' })), from('10.1.2.3'))?.status).toBe(401);
      expect(admission.check(invite(answer(challenge, { algorithm, user: 'other' })), from('10.1.2.3'))?.status).toBe(401);
    }
    // A made-up nonce does not pass, however well it is hashed.
    const forged = answer('Digest realm="sprachrohr", nonce="abc.def"', { algorithm: 'MD5' });
    expect(admission.check(invite(forged), from('10.1.2.3'))?.status).toBe(401);
    // Sources off the list are not even challenged.
    expect(admission.check(invite(), from('192.0.2.1'))).toEqual({ status: 403 });
  });

  it('marks an expired nonce stale, so the caller retries without asking its user again', () => {
    let now = 1_000_000;
    const admission = new CallAdmission({
      allow: ['10.0.0.0/8'],
      digest: { realm: 'r', user: 'trunk', password: 'geheim' },
      maxCalls: 10,
      maxCallsPerSource: 10,
      nonceLifetimeMs: 60_000,
      now: () => now,
    });
    const challenge = admission.check(invite(), from('10.1.2.3'))!.headers![1]![1];
    now += 61_000;
    const refusal = admission.check(invite(answer(challenge, { algorithm: 'MD5' })), from('10.1.2.3'));
    expect(refusal?.status).toBe(401);
    expect(refusal!.headers![0]![1]).toMatch(/stale=true/);
  });

  it('limits calls per source and overall with 503 and Retry-After, and frees a slot when a call ends', () => {
    const admission = new CallAdmission({ allow: ['0.0.0.0/0'], maxCalls: 3, maxCallsPerSource: 2 });
    const dialogs = [fakeDialog(), fakeDialog(), fakeDialog()];
    admission.track(dialogs[0]!, from('10.0.0.1'));
    admission.track(dialogs[1]!, from('10.0.0.1'));
    expect(admission.check(invite(), from('10.0.0.1'))).toEqual({ status: 503, headers: [['Retry-After', '5']] });
    expect(admission.check(invite(), from('10.0.0.2'))).toBeNull();
    admission.track(dialogs[2]!, from('10.0.0.2'));
    expect(admission.check(invite(), from('10.0.0.3'))?.status).toBe(503);
    (dialogs[0] as unknown as EventEmitter).emit('ended', 'bye');
    expect(admission.activeCalls).toBe(2);
    expect(admission.check(invite(), from('10.0.0.1'))).toBeNull();
  });
});

describe("a trunk's sources", () => {
  const admission = () => {
    const rules = new CallAdmission({ allow: ['127.0.0.1'], digest: { realm: 'gw', user: 'trunk', password: 'geheim' }, maxCalls: 10, maxCallsPerSource: 10 });
    rules.setTrunkSources([
      { name: 'carrier', allow: ['192.0.2.0/24'], maxCalls: 2 },
      { name: 'pbx', allow: ['2001:db8::/32'], maxCalls: 5 },
    ]);
    return rules;
  };

  it('are let in for their trunk, without the deployment digest', () => {
    const rules = admission();
    expect(rules.trunkFor('::ffff:192.0.2.7')).toBe('carrier');
    expect(rules.trunkFor('2001:db8::1')).toBe('pbx');
    expect(rules.trunkFor('198.51.100.1')).toBeNull();
    expect(rules.check(invite(), from('192.0.2.7'))).toBeNull();
    expect(rules.check(invite(), from('198.51.100.1'))).toEqual({ status: 403 });
    // The deployment's own sources still authenticate.
    expect(rules.check(invite(), from('127.0.0.1'))?.status).toBe(401);
  });

  it('hold the trunk to its max_calls, and give the calls back as they end', () => {
    const rules = admission();
    const dialogs = [fakeDialog(), fakeDialog()];
    for (const dialog of dialogs) rules.track(dialog, from('192.0.2.7'));
    expect(rules.trunkCalls('carrier')).toBe(2);
    expect(rules.check(invite(), from('192.0.2.8'))).toEqual({ status: 503, headers: [['Retry-After', '5']] });
    expect(rules.check(invite(), from('2001:db8::1'))).toBeNull();
    (dialogs[0] as unknown as EventEmitter).emit('ended');
    expect(rules.trunkCalls('carrier')).toBe(1);
    expect(rules.check(invite(), from('192.0.2.8'))).toBeNull();
    // A reloaded trunk file takes effect for the next call.
    rules.setTrunkSources([]);
    expect(rules.check(invite(), from('192.0.2.8'))).toEqual({ status: 403 });
  });

  it('count the calls the gateway places through the trunk, and in the process, until they are released once', () => {
    const rules = admission();
    const release = rules.trackPlaced('carrier');
    rules.track(fakeDialog(), from('192.0.2.7'));
    expect(rules.trunkCalls('carrier')).toBe(2);
    expect(rules.activeCalls).toBe(2);
    expect(rules.check(invite(), from('192.0.2.8'))?.status).toBe(503);
    release();
    release();
    expect(rules.trunkCalls('carrier')).toBe(1);
    expect(rules.activeCalls).toBe(1);
    // Placed calls fill the process's calls too: SPRACHROHR_SIP_MAX_CALLS is for both directions.
    const placed = Array.from({ length: 9 }, () => rules.trackPlaced(null));
    expect(rules.check(invite(), from('2001:db8::1'))?.status).toBe(503);
    placed.forEach((done) => done());
    expect(rules.check(invite(), from('2001:db8::1'))).toBeNull();
  });
});
