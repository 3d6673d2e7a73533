/**
 * The SIP parser and stream framer against well-formed, odd-but-legal and hostile messages
 * (in the spirit of RFC 4475's torture tests).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseNameAddress, parseSipUri, parseVia } from '../../../src/telephony/sip/sip-headers.js';
import { serializeMessage } from '../../../src/telephony/sip/sip-message.js';
import { MAX_MESSAGE_BYTES, parseSipMessage } from '../../../src/telephony/sip/sip-parser.js';
import { SipStreamFramer } from '../../../src/telephony/sip/sip-stream-framer.js';

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n';

function invite(overrides: { headers?: string[]; body?: string; start?: string } = {}): string {
  const body = overrides.body ?? SDP;
  const headers = overrides.headers ?? [
    'Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-1;rport',
    'Max-Forwards: 70',
    'From: "Anna Muster" <sip:anna@127.0.0.1:5061>;tag=abc',
    'To: <sip:100@127.0.0.1>',
    'Call-ID: call-1@127.0.0.1',
    'CSeq: 1 INVITE',
    'Contact: <sip:anna@127.0.0.1:5061>',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return `${overrides.start ?? 'INVITE sip:100@127.0.0.1 SIP/2.0'}\r\n${headers.join('\r\n')}\r\n\r\n${body}`;
}

const parse = (text: string | Buffer) => parseSipMessage(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);

describe('SIP parser', () => {
  it('reads a request: method, URI, headers by any case and compact form, body cut at Content-Length', () => {
    const result = parse(invite());
    if (!result.ok || result.message.kind !== 'request') throw new Error(JSON.stringify(result));
    const { message } = result;
    expect(message.method).toBe('INVITE');
    expect(message.uri).toBe('sip:100@127.0.0.1');
    expect(message.headers.get('call-id')).toBe('call-1@127.0.0.1');
    expect(message.headers.get('i')).toBe('call-1@127.0.0.1');
    expect(message.body.toString()).toBe(SDP);
  });

  it('accepts LF-only line ends, folded headers, compact forms, extra spaces and leading CRLF keep-alives', () => {
    const text = [
      '\r\n\r\nOPTIONS   sip:gw@127.0.0.1   SIP/2.0',
      'v: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-x',
      'f: <sip:a@b>;tag=1',
      't:   <sip:gw@127.0.0.1>',
      'i: opt-1',
      'CSeq:   7    OPTIONS',
      'Subject: a subject',
      '  that goes on',
      'l: 0',
      '',
      '',
    ].join('\n');
    const result = parse(text);
    if (!result.ok) throw new Error(result.reason);
    expect(result.message.headers.get('Subject')).toBe('a subject that goes on');
    expect(result.message.headers.get('To')).toBe('<sip:gw@127.0.0.1>');
  });

  it('splits list headers at commas outside quotes and brackets', () => {
    const result = parse(
      invite({
        headers: [
          'Via: SIP/2.0/UDP a:1;branch=z9hG4bK-1, SIP/2.0/TCP b:2;branch=z9hG4bK-2',
          'Via: SIP/2.0/UDP c;branch=z9hG4bK-3',
          'From: "Muster, Anna" <sip:a@b>;tag=1',
          'To: <sip:x@y>',
          'Call-ID: c',
          'CSeq: 1 INVITE',
          'Content-Length: 0',
        ],
        body: '',
      }),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(result.message.headers.getAll('Via')).toHaveLength(3);
    expect(parseNameAddress(result.message.headers.get('From')!)?.displayName).toBe('Muster, Anna');
  });

  it('takes the rest of a datagram as body without Content-Length and truncates to a shorter one', () => {
    const without = parse(
      invite({ headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE'] }),
    );
    expect(without.ok && without.message.body.toString()).toBe(SDP);
    const shorter = parse(
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: 3'],
      }),
    );
    expect(shorter.ok && shorter.message.body.toString()).toBe('v=0');
  });

  it('reads a response', () => {
    const result = parse(
      'SIP/2.0 180 Ringing\r\nVia: SIP/2.0/UDP a;branch=z9hG4bK-1\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@y>;tag=2\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n',
    );
    expect(result.ok && result.message.kind === 'response' && result.message.status).toBe(180);
  });

  const refused: Array<[string, string | Buffer, RegExp, number]> = [
    ['empty', '', /empty/, 400],
    ['random bytes', randomBytes(512), /start line|header|empty/, 400],
    ['HTTP', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', /not a SIP start line/, 400],
    ['another SIP version', invite({ start: 'INVITE sip:1@h SIP/3.0' }), /version 3.0/, 505],
    [
      'no Via',
      invite({ headers: ['From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: 0'], body: '' }),
      /Via header is missing/,
      400,
    ],
    [
      'no Call-ID',
      invite({ headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'CSeq: 1 INVITE', 'Content-Length: 0'], body: '' }),
      /Call-ID header is missing/,
      400,
    ],
    [
      'CSeq method of another request',
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 BYE', 'Content-Length: 0'],
        body: '',
      }),
      /does not match/,
      400,
    ],
    [
      'malformed CSeq',
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: one INVITE', 'Content-Length: 0'],
        body: '',
      }),
      /malformed CSeq/,
      400,
    ],
    [
      'CSeq over 2^31',
      invite({
        headers: [
          'Via: SIP/2.0/UDP a;branch=z9hG4bK-1',
          'From: <sip:a@b>;tag=1',
          'To: <sip:x@y>',
          'Call-ID: c',
          'CSeq: 4294967296 INVITE',
          'Content-Length: 0',
        ],
        body: '',
      }),
      /CSeq number/,
      400,
    ],
    [
      'negative Content-Length',
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: -5'],
      }),
      /malformed Content-Length/,
      400,
    ],
    [
      'Content-Length past the end',
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: 9999'],
      }),
      /more than the/,
      400,
    ],
    [
      'conflicting Content-Length',
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: 3', 'l: 4'],
      }),
      /conflicting/,
      400,
    ],
    [
      'a header line without a colon',
      invite({ headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE'] }),
      /malformed header line/,
      400,
    ],
    [
      'no blank line after the headers',
      'OPTIONS sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP a;branch=z9hG4bK-1\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@y>\r\nCall-ID: c\r\nCSeq: 1 OPTIONS',
      /blank line/,
      400,
    ],
    [
      'a status out of range',
      'SIP/2.0 999 What\r\nVia: SIP/2.0/UDP a;branch=z9hG4bK-1\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@y>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n\r\n',
      /out of range/,
      400,
    ],
    [
      'too many headers',
      invite({
        headers: [
          'Via: SIP/2.0/UDP a;branch=z9hG4bK-1',
          'From: <sip:a@b>;tag=1',
          'To: <sip:x@y>',
          'Call-ID: c',
          'CSeq: 1 INVITE',
          ...Array.from({ length: 300 }, (_, i) => `X-H${i}: v`),
        ],
      }),
      /more than 256/,
      400,
    ],
    ['a message over the size limit', Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x41), /over the/, 413],
  ];
  for (const [name, text, reason, status] of refused) {
    it(`refuses ${name} with a reason, never throwing`, () => {
      const result = parse(text);
      if (result.ok) throw new Error('accepted');
      expect(result.reason).toMatch(reason);
      expect(result.status).toBe(status);
    });
  }

  it('keeps the request headers of a refused request so it can be answered 400', () => {
    const result = parse(
      invite({
        headers: ['Via: SIP/2.0/UDP a;branch=z9hG4bK-1', 'From: <sip:a@b>;tag=1', 'To: <sip:x@y>', 'Call-ID: c', 'CSeq: 1 INVITE', 'Content-Length: x'],
      }),
    );
    if (result.ok) throw new Error('accepted');
    expect(result.request?.method).toBe('INVITE');
    expect(result.request?.headers.get('Call-ID')).toBe('c');
  });

  it('survives ten thousand random mutations of a valid message without throwing', () => {
    const base = Buffer.from(invite());
    for (let round = 0; round < 10_000; round++) {
      const mutated = Buffer.from(base);
      for (let n = 0; n < 1 + (round % 8); n++) mutated[Math.floor(Math.random() * mutated.length)] = Math.floor(Math.random() * 256);
      expect(() => parse(mutated)).not.toThrow();
    }
  });

  it('writes what it reads: serialising a parsed message parses back to the same', () => {
    const result = parse(invite());
    if (!result.ok) throw new Error(result.reason);
    const again = parse(serializeMessage(result.message));
    if (!again.ok) throw new Error(again.reason);
    expect(again.message.headers.lines()).toEqual(result.message.headers.lines());
    expect(again.message.body.equals(result.message.body)).toBe(true);
  });

  it('sets Content-Length from the body bytes, not its characters', () => {
    const result = parse(invite({ body: 's=Zürich\r\n' }));
    if (!result.ok) throw new Error(result.reason);
    expect(serializeMessage(result.message).toString()).toContain('Content-Length: 11\r\n');
  });
});

describe('SIP stream framer', () => {
  it('cuts messages at Content-Length across chunk boundaries, skipping keep-alives', () => {
    const framer = new SipStreamFramer();
    const two = Buffer.from(`\r\n\r\n${invite()}${invite()}\r\n`);
    const messages: Buffer[] = [];
    for (let at = 0; at < two.length; at += 7) {
      const { messages: out, fatal } = framer.push(two.subarray(at, at + 7));
      expect(fatal).toBeNull();
      messages.push(...out);
    }
    expect(messages).toHaveLength(2);
    for (const message of messages) expect(parse(message).ok).toBe(true);
  });

  it('drops a connection that sends a message without Content-Length, a bad one, or too much', () => {
    expect(new SipStreamFramer().push(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nVia: x\r\n\r\n')).fatal).toMatch(/without Content-Length/);
    expect(new SipStreamFramer().push(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nContent-Length: 1e3\r\n\r\n')).fatal).toMatch(/malformed Content-Length/);
    expect(new SipStreamFramer().push(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nContent-Length: 999999\r\n\r\n')).fatal).toMatch(/over the/);
    const endless = new SipStreamFramer();
    let fatal: string | null = null;
    for (let i = 0; i < 80 && !fatal; i++) fatal = endless.push(Buffer.alloc(1024, 0x41)).fatal;
    expect(fatal).toMatch(/header block over/);
  });
});

describe('SIP header values', () => {
  it('reads Via with transport, IPv6 host, port, branch and rport', () => {
    const via = parseVia('SIP/2.0/tcp [::1]:5070;branch=z9hG4bK-77;rport;received=10.0.0.1');
    expect(via).toMatchObject({ transport: 'TCP', host: '[::1]', port: 5070, branch: 'z9hG4bK-77' });
    expect(via?.params.has('rport')).toBe(true);
    expect(parseVia('SIP/2.0/UDP host:99999')).toBeNull();
    expect(parseVia('nonsense')).toBeNull();
  });

  it('reads name-addr and addr-spec forms with their parameters', () => {
    expect(parseNameAddress('"Anna" <sip:anna@h;transport=tcp>;tag=9')).toMatchObject({ displayName: 'Anna', uri: 'sip:anna@h;transport=tcp' });
    expect(parseNameAddress('sip:anna@h;tag=9')?.params.get('tag')).toBe('9');
    expect(parseNameAddress('<sip:unclosed')).toBeNull();
  });

  it('reads SIP URIs with user, host, port and parameters', () => {
    expect(parseSipUri('sip:%2B41441234567@gw.example.ch:5080;user=phone')).toMatchObject({
      scheme: 'sip',
      user: '+41441234567',
      host: 'gw.example.ch',
      port: 5080,
    });
    expect(parseSipUri('sips:[2001:db8::1]')).toMatchObject({ scheme: 'sips', user: null, host: '[2001:db8::1]' });
    expect(parseSipUri('tel:+41441234567')).toBeNull();
  });
});
