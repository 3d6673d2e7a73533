import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDialplans } from '../../../src/dialplan/dialplan-loader.js';
import { checkTrunks, loadTrunks } from '../../../src/telephony/trunks/trunk-loader.js';

const env = { CARRIER_PASSWORD: 'geheim' };
const check = (text: string) => checkTrunks('trunks.yaml', text, env);
const problem = (text: string): string => {
  try {
    check(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
};

describe('the trunk file', () => {
  it('fills in the defaults of a registering trunk', () => {
    const [trunk] = check(
      ['trunks:', '  - name: carrier', '    registrar: sip.example.ch', '    username: "0441234567"', '    password_env: CARRIER_PASSWORD'].join('\n'),
    );
    expect(trunk).toEqual({
      name: 'carrier',
      file: 'trunks.yaml',
      registrar: { host: 'sip.example.ch', port: 5060 },
      proxy: { host: 'sip.example.ch', port: 5060 },
      transport: 'UDP',
      tlsCaFile: null,
      tlsCa: null,
      username: '0441234567',
      authUsername: null,
      password: 'geheim',
      realm: null,
      fromUser: '0441234567',
      fromDomain: 'sip.example.ch',
      callerId: null,
      codecs: ['PCMA', 'PCMU'],
      allow: [],
      maxCalls: 30,
      register: true,
      expiresSeconds: 600,
      optionsIntervalSeconds: 30,
    });
  });

  it('takes every field, IPv6 in brackets and TLS on 5061', () => {
    const [trunk] = check(
      [
        'trunks:',
        '  - name: pbx_bern',
        '    registrar: "[2001:db8::5]"',
        '    proxy: edge.example.ch:5070',
        '    transport: tls',
        '    username: gw',
        '    auth_username: gw-auth',
        '    password_env: CARRIER_PASSWORD',
        '    realm: example.ch',
        '    from_user: "0311234567"',
        '    from_domain: example.ch',
        '    caller_id: "+41311234567"',
        '    codecs: [opus, PCMA]',
        '    allow: [192.0.2.0/24, "2001:db8::/32"]',
        '    max_calls: 8',
        '    expires_s: 300',
        '    options_interval_s: 0',
      ].join('\n'),
    );
    expect(trunk).toMatchObject({
      registrar: { host: '2001:db8::5', port: 5061 },
      proxy: { host: 'edge.example.ch', port: 5070 },
      transport: 'TLS',
      authUsername: 'gw-auth',
      callerId: '+41311234567',
      codecs: ['opus', 'PCMA'],
      maxCalls: 8,
      optionsIntervalSeconds: 0,
    });
  });

  it('takes a trunk that does not register: the carrier knows the gateway by its address', () => {
    const [trunk] = check(['trunks:', '  - name: ip-trunk', '    proxy: 192.0.2.10', '    allow: [192.0.2.10]'].join('\n'));
    expect(trunk).toMatchObject({ register: false, registrar: null, proxy: { host: '192.0.2.10', port: 5060 }, password: null });
  });

  it('names the file, line and column of each problem', () => {
    expect(problem('trunks:\n  - name: a\n    registrar: x\n    usernme: y\n')).toBe('trunks.yaml:4:14: unknown field "usernme"');
    expect(problem('trunks:\n  - name: Carrier\n    proxy: x\n')).toMatch(/^trunks.yaml:2:11: name must match pattern/);
    expect(problem('trunks:\n  - name: a\n    proxy: x\n  - name: a\n    proxy: y\n')).toBe('trunks.yaml:4:11: the trunk name "a" is used twice');
    expect(problem('trunks:\n  - name: a\n    registrar: x:70000\n    username: u\n    password_env: CARRIER_PASSWORD\n')).toBe(
      'trunks.yaml:3:16: registrar "x:70000" has a port outside 1–65535',
    );
    expect(problem('trunks:\n  - name: a\n    registrar: x\n    username: u\n    password_env: NOT_SET\n')).toBe(
      'trunks.yaml:5:19: password_env names NOT_SET, which is not set in the environment',
    );
    expect(problem('trunks:\n  - name: a\n    registrar: x\n    password_env: CARRIER_PASSWORD\n')).toBe(
      'trunks.yaml:2:5: a trunk that registers needs its username',
    );
    expect(problem('trunks:\n  - name: a\n    registrar: x\n    username: u\n')).toBe(
      'trunks.yaml:2:5: a trunk that registers needs password_env (the variable with its password)',
    );
    expect(problem('trunks:\n  - name: a\n    register: true\n    proxy: x\n')).toBe('trunks.yaml:3:15: a trunk that registers needs its registrar');
    expect(problem('trunks:\n  - name: a\n')).toBe('trunks.yaml:2:11: a trunk needs a registrar or a proxy: where its calls go');
    expect(problem('trunks:\n  - name: a\n    proxy: x\n    allow: [10.0.0.0/33]\n')).toBe(
      'trunks.yaml:4:12: allow entry 1: "10.0.0.0/33" has an invalid prefix length',
    );
    expect(problem('trunks:\n  - name: a\n    proxy: x\n    transport: sctp\n')).toBe('trunks.yaml:4:16: transport must be one of udp, tcp, tls');
    expect(problem('trunks:\n  - name: a\n    proxy: x\n    expires_s: 10\n')).toBe('trunks.yaml:4:16: expires_s must be >= 60');
    expect(problem('trunk:\n  - name: a\n')).toBe("trunks.yaml:1:1: the file must have required property 'trunks'");
    expect(problem('- a\n')).toBe('trunks.yaml:1:1: a trunk file is a mapping with the list trunks');
    expect(problem('trunks: [\n')).toMatch(/^trunks.yaml:2:1: /);
  });

  it('lives beside the dialplans, which leave it alone', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'trunks-'));
    try {
      expect(await loadTrunks(dir, env)).toEqual([]);
      await fs.writeFile(path.join(dir, 'trunks.yaml'), 'trunks:\n  - name: a\n    proxy: 192.0.2.1\n');
      await fs.writeFile(
        path.join(dir, 'hotline.yaml'),
        'name: hotline\nroutes:\n  - number: "*"\n    language: de-CH\n    voice: jonas\n    steps:\n      - hangup: {}\n',
      );
      expect((await loadTrunks(dir, env)).map((trunk) => trunk.name)).toEqual(['a']);
      expect((await loadDialplans(dir)).routes.map((route) => route.file)).toEqual([path.join(dir, 'hotline.yaml')]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
