/**
 * Every way `parseOffer` refuses a description, with the SIP status it asks for (400 for what is
 * not well-formed SDP or too large, 488 for SDP without audio we can take part in) and a detail
 * that names the problem.
 */
import { describe, expect, it } from 'vitest';
import { parseOffer } from '../../../src/telephony/sdp/parse-offer.js';
import { SdpError } from '../../../src/telephony/sdp/sdp-error.js';
import { crlf, SIPP_UAC, withAudio } from './sdp-fixtures.js';

/** The error `parseOffer` throws for `text`; fails the test when it does not throw one. */
function refusal(text: string): SdpError {
  try {
    parseOffer(text);
  } catch (error) {
    if (error instanceof SdpError) return error;
    throw error;
  }
  throw new Error('parseOffer accepted the description');
}

/** Deterministic bytes that look like nothing (a linear congruential generator). */
function noise(length: number): string {
  let state = 12345;
  let text = '';
  for (let i = 0; i < length; i += 1) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += String.fromCharCode(state % 256);
  }
  return text;
}

describe('parseOffer refuses what is not SDP with 400', () => {
  it.each([
    ['an empty body', '', /body is empty/],
    ['only blank lines', '\r\n \r\n', /body is empty/],
    ['random bytes', noise(500), /first line must be v=0/],
    ['an HTML page', '<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n', /first line must be v=0, not "<!DOCTYPE html>"/],
    ['JSON', '{"v":0}', /first line must be v=0/],
    ['another SDP version', SIPP_UAC.replace('v=0', 'v=1'), /first line must be v=0, not "v=1"/],
  ])('%s', (_name, text, detail) => {
    const error = refusal(text);
    expect(error.status).toBe(400);
    expect(error.detail).toMatch(detail);
    expect(error.message).toContain('malformed session description');
  });

  it('names a line that is not <type>=<value>, with its number', () => {
    const error = refusal(SIPP_UAC.replace('s=-', 'Content-Type: application/sdp'));
    expect([error.status, error.detail]).toEqual([400, 'line 3 is not <type>=<value>: "Content-Type: application/sdp"']);
  });

  it('quotes untrusted text escaped and shortened', () => {
    const error = refusal(`v=0\r\n\u0000${'x'.repeat(200)}`);
    expect(error.detail).toContain('"\\u0000xxx');
    expect(error.detail.length).toBeLessThan(120);
  });

  it('refuses a missing or malformed o= line', () => {
    expect(refusal(SIPP_UAC.replace(/o=.*\r\n/, ''))).toMatchObject({ status: 400, detail: 'no origin line (o=) before the first m-line' });
    expect(refusal(SIPP_UAC.replace('53655765', 'abc'))).toMatchObject({ status: 400, detail: expect.stringMatching(/^malformed origin line "o=user1 abc/) });
    expect(refusal(SIPP_UAC.replace(' IN IP4 127.0.0.1\r\ns', '\r\ns')).status).toBe(400);
  });

  it('refuses a malformed m-line', () => {
    for (const mLine of ['m=audio', 'm=audio 6000 RTP/AVP', 'm=audio x RTP/AVP 0', 'm=audio -1 RTP/AVP 0']) {
      expect(refusal(withAudio(mLine))).toMatchObject({ status: 400, detail: expect.stringContaining('malformed m-line 1') });
    }
  });

  it('refuses an audio port out of range', () => {
    expect(refusal(withAudio('m=audio 70000 RTP/AVP 0'))).toMatchObject({ status: 400, detail: 'audio port 70000 is out of range (1–65535)' });
  });

  it('refuses formats that are not payload types', () => {
    expect(refusal(withAudio('m=audio 6000 RTP/AVP 0 128'))).toMatchObject({ status: 400, detail: 'audio format "128" is not an RTP payload type (0–127)' });
    expect(refusal(withAudio('m=audio 6000 RTP/AVP PCMU')).detail).toContain('"PCMU" is not an RTP payload type');
  });

  it('refuses audio without any c= line, or with a malformed one', () => {
    const noConnection = crlf('v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 't=0 0', 'm=audio 4000 RTP/AVP 0');
    expect(refusal(noConnection)).toMatchObject({ status: 400, detail: expect.stringContaining('no connection address') });
    expect(refusal(SIPP_UAC.replace('c=IN IP4 127.0.0.1', 'c=IN IP4'))).toMatchObject({
      status: 400,
      detail: expect.stringContaining('malformed connection line "c=IN IP4"'),
    });
  });
});

describe('parseOffer refuses oversized descriptions with 400', () => {
  it('refuses more than 16 KiB', () => {
    const big = SIPP_UAC + `a=x-padding:${'p'.repeat(20 * 1024)}\r\n`;
    expect(refusal(big)).toMatchObject({ status: 400, detail: expect.stringMatching(/^the description has \d+ bytes, more than the 16384 accepted$/) });
    // Bytes, not characters: 6000 three-byte characters are 18000 bytes.
    expect(refusal(SIPP_UAC + `a=x-note:${'€'.repeat(6000)}\r\n`).detail).toContain('bytes');
  });

  it('refuses more than 512 lines', () => {
    const many = SIPP_UAC + 'a=x\r\n'.repeat(520);
    expect(refusal(many)).toMatchObject({ status: 400, detail: 'the description has more than 512 lines' });
  });

  it('refuses more than 64 m-lines', () => {
    const many = SIPP_UAC + 'm=video 0 RTP/AVP 96\r\n'.repeat(64);
    expect(refusal(many)).toMatchObject({ status: 400, detail: 'the description has more than 64 m-lines' });
  });
});

describe('parseOffer refuses media it cannot take part in with 488', () => {
  it('refuses a description without audio', () => {
    const videoOnly = withAudio('m=video 5000 RTP/AVP 96', 'a=rtpmap:96 H264/90000');
    expect(refusal(videoOnly)).toMatchObject({ status: 488, detail: 'no audio m-line (media offered: video)' });
    expect(refusal(crlf('v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0')).detail).toBe('no audio m-line (media offered: none)');
  });

  it('refuses a disabled audio stream', () => {
    expect(refusal(withAudio('m=audio 0 RTP/AVP 0'))).toMatchObject({ status: 488, detail: 'the audio stream is disabled (port 0)' });
  });

  it('refuses offers with only codecs we do not support, and names them', () => {
    const g729 = withAudio('m=audio 6000 RTP/AVP 18 101', 'a=rtpmap:18 G729/8000', 'a=fmtp:18 annexb=no', 'a=rtpmap:101 telephone-event/8000');
    const error = refusal(g729);
    expect(error.status).toBe(488);
    expect(error.detail).toBe(
      'no supported audio codec offered (offered: 18 G729/8000, 101 telephone-event/8000); supported are PCMU/8000, PCMA/8000 and opus/48000/2',
    );
    expect(refusal(withAudio('m=audio 6000 RTP/AVP 9 3')).detail).toContain('(offered: 9, 3)');
  });

  it('refuses encrypted and non-RTP protocols', () => {
    for (const protocol of ['RTP/SAVP', 'RTP/SAVPF', 'UDP/TLS/RTP/SAVPF', 'TCP/RTP/AVP', 'udp']) {
      const error = refusal(withAudio(`m=audio 6000 ${protocol} 0`));
      expect(error.status).toBe(488);
      expect(error.detail).toContain(`audio protocol "${protocol}" is not supported`);
    }
  });

  it('gives the first audio stream’s reason when no audio stream is usable', () => {
    const both = withAudio('m=audio 6000 RTP/SAVP 0', 'm=audio 6002 RTP/AVP 18');
    expect(refusal(both).detail).toContain('"RTP/SAVP"');
  });

  it('refuses port counts', () => {
    expect(refusal(withAudio('m=audio 6000/2 RTP/AVP 0'))).toMatchObject({ status: 488, detail: expect.stringContaining('port counts') });
  });

  it('refuses connection addresses we cannot send to', () => {
    const cases: Array<[string, RegExp]> = [
      ['c=IN IP4 pbx.example.ch', /not a literal IPv4 address/],
      ['c=IN IP4 ::1', /not a literal IPv4 address/],
      ['c=IN IP6 192.0.2.1', /not a literal IPv6 address/],
      ['c=IN IP4 224.2.1.1/127', /not a literal IPv4 address/],
      ['c=IN IP4 239.1.2.3', /multicast/],
      ['c=IN IP6 ff02::1', /multicast/],
      ['c=ATM NSAP 47.0091.8100.0000.0060.3E64.FD01.0060.3E64.FD01.00', /not an Internet/],
    ];
    for (const [line, detail] of cases) {
      const error = refusal(SIPP_UAC.replace('c=IN IP4 127.0.0.1', line));
      expect(error.status, line).toBe(488);
      expect(error.detail, line).toMatch(detail);
    }
  });
});
