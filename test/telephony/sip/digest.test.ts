import { describe, expect, it } from 'vitest';
import { authParams, chooseChallenge, digestAuthorization, digestResponse } from '../../../src/telephony/sip/digest.js';

/** RFC 7616 section 3.9.1: the same request answered with MD5 and with SHA-256. */
const RFC7616 = {
  username: 'Mufasa',
  password: 'Circle of Life',
  realm: 'http-auth@example.org',
  method: 'GET',
  uri: '/dir/index.html',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  qop: 'auth' as const,
  nc: '00000001',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
};

describe('digest authentication', () => {
  it('computes the responses of RFC 7616 section 3.9.1', () => {
    expect(digestResponse({ ...RFC7616, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
    expect(digestResponse({ ...RFC7616, algorithm: 'SHA-256' })).toBe('753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  });

  it('computes the response of RFC 2617 section 3.5 (MD5, qop auth)', () => {
    const response = digestResponse({
      algorithm: 'MD5',
      username: 'Mufasa',
      password: 'Circle Of Life',
      realm: 'testrealm@host.com',
      method: 'GET',
      uri: '/dir/index.html',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      qop: 'auth',
      nc: '00000001',
      cnonce: '0a4f113b',
    });
    expect(response).toBe('6629fae49393a05397450978507c4ef1');
  });

  it('reads quoted, escaped and bare parameters', () => {
    const params = authParams('Digest realm="a \\"b\\", c", nonce=xyz, algorithm=SHA-256, qop="auth,auth-int", stale=TRUE');
    expect(Object.fromEntries(params)).toEqual({ realm: 'a "b", c', nonce: 'xyz', algorithm: 'SHA-256', qop: 'auth,auth-int', stale: 'TRUE' });
  });

  it('chooses SHA-256 over MD5, and refuses what it cannot answer', () => {
    const md5 = 'Digest realm="sip.example.ch", nonce="n1", algorithm=MD5, qop="auth"';
    const sha = 'Digest realm="sip.example.ch", nonce="n2", algorithm=SHA-256, qop="auth", opaque="o", stale=true';
    expect(chooseChallenge([md5, sha])).toEqual({ realm: 'sip.example.ch', nonce: 'n2', algorithm: 'SHA-256', qop: 'auth', opaque: 'o', stale: true });
    expect(chooseChallenge(['Digest realm="r", nonce="n"'])).toMatchObject({ algorithm: 'MD5', qop: null, opaque: null, stale: false });
    expect(chooseChallenge(['Digest realm="r", nonce="n", algorithm=SHA-512-256'])).toBeNull();
    expect(chooseChallenge(['Digest realm="r", nonce="n", qop="auth-int"'])).toBeNull();
    expect(chooseChallenge(['Basic realm="r"', 'Digest realm="r"'])).toBeNull();
  });

  it('answers a challenge with a header the server can check', () => {
    const challenge = chooseChallenge(['Digest realm="sip.example.ch", nonce="abc", algorithm=SHA-256, qop="auth", opaque="op"'])!;
    // Credentials that carry a realm of their own (null: any) do not change the challenge's.
    const credentials = { username: 'gw"1', password: 'secret', realm: null };
    const header = digestAuthorization(challenge, credentials, 'REGISTER', 'sip:sip.example.ch', 3);
    const params = authParams(header);
    expect(params.get('username')).toBe('gw"1');
    expect(params.get('nc')).toBe('00000003');
    expect(params.get('opaque')).toBe('op');
    const expected = digestResponse({
      algorithm: 'SHA-256',
      username: 'gw"1',
      password: 'secret',
      realm: 'sip.example.ch',
      method: 'REGISTER',
      uri: 'sip:sip.example.ch',
      nonce: 'abc',
      qop: 'auth',
      nc: '00000003',
      cnonce: params.get('cnonce')!,
    });
    expect(params.get('response')).toBe(expected);
  });
});
