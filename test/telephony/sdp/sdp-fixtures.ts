/**
 * Session descriptions as real endpoints send them, written out inline so that each test shows
 * what it reads. `crlf` joins lines with CRLF (RFC 4566), which most of them use on the wire.
 */

/** Joins lines into a description with CRLF line ends and a final CRLF. */
export function crlf(...lines: string[]): string {
  return lines.map((line) => `${line}\r\n`).join('');
}

/** SIPp's built-in uac scenario: one static codec, no direction attribute. */
export const SIPP_UAC =
  'v=0\r\no=user1 53655765 2353687637 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

/** baresip with opus first, both G.711 laws, and telephone-event at both clock rates. */
export const BARESIP = crlf(
  'v=0',
  'o=- 1681928342 2874563019 IN IP4 192.168.1.20',
  's=-',
  'c=IN IP4 192.168.1.20',
  't=0 0',
  'm=audio 10046 RTP/AVP 96 0 8 101 102',
  'b=AS:128',
  'a=rtpmap:96 opus/48000/2',
  'a=fmtp:96 stereo=1;sprop-stereo=1',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/48000',
  'a=fmtp:101 0-15',
  'a=rtpmap:102 telephone-event/8000',
  'a=fmtp:102 0-15',
  'a=ptime:20',
  'a=sendrecv',
  'a=label:1',
  'a=rtcp-rsize',
  'a=ssrc:1950243577 cname:ff5f5f8b-24c3-4c6b-9e7d-4a4d0f2a1c2d',
);

/** Asterisk putting the call on hold with a re-INVITE: A-law first, a=sendonly. */
export const ASTERISK_HOLD = crlf(
  'v=0',
  'o=- 1687421906 1687421908 IN IP4 203.0.113.10',
  's=Asterisk',
  'c=IN IP4 203.0.113.10',
  't=0 0',
  'm=audio 16212 RTP/AVP 8 0 101',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=maxptime:150',
  'a=sendonly',
);

/** An old gateway holding the RFC 2543 way: connection address 0.0.0.0, no direction attribute. */
export const ZERO_ADDRESS_HOLD = crlf(
  'v=0',
  'o=CiscoSystemsSIP-GW-UserAgent 4169 2 IN IP4 198.51.100.7',
  's=SIP Call',
  'c=IN IP4 0.0.0.0',
  't=0 0',
  'm=audio 18228 RTP/AVP 0 101',
  'c=IN IP4 0.0.0.0',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
);

/** A softphone on IPv6 loopback. */
export const IPV6 = crlf('v=0', 'o=bob 2890844526 2890844526 IN IP6 ::1', 's=-', 'c=IN IP6 ::1', 't=0 0', 'm=audio 49170 RTP/AVP 8 0', 'a=rtpmap:8 PCMA/8000');

/** Linphone offering video first, audio second, and a T.38 image stream last. */
export const VIDEO_AUDIO = crlf(
  'v=0',
  'o=alice 3402 1280 IN IP4 192.0.2.55',
  's=Talk',
  'c=IN IP4 192.0.2.55',
  't=0 0',
  'a=rtcp-xr:rcvr-rtt=all:10000 stat-summary=loss,dup,jitt,TTL voip-metrics',
  'm=video 9078 RTP/AVPF 96 97',
  'a=rtpmap:96 VP8/90000',
  'a=rtpmap:97 H264/90000',
  'a=fmtp:97 profile-level-id=42801F',
  'a=rtcp-fb:* ccm fir',
  'm=audio 7078 RTP/AVP 96 97 0 8 101',
  'a=rtpmap:96 opus/48000/2',
  'a=fmtp:96 useinbandfec=1',
  'a=rtpmap:97 speex/16000',
  'a=rtpmap:101 telephone-event/8000',
  'a=rtcp-fb:* trr-int 1000',
  'm=image 0 udptl t38',
);

/** Best-effort SRTP: an RTP/SAVP audio stream, then the same audio over plain RTP/AVP. */
export const SRTP_THEN_RTP = crlf(
  'v=0',
  'o=- 20518 0 IN IP4 198.51.100.33',
  's=-',
  'c=IN IP4 198.51.100.33',
  't=0 0',
  'm=audio 5004 RTP/SAVP 0',
  'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:32',
  'm=audio 5006 RTP/AVP 0',
);

/** A description with the given audio m-line and media-level lines, everything else like SIPp's. */
export function withAudio(mLine: string, ...mediaLines: string[]): string {
  return crlf('v=0', 'o=user1 53655765 2353687637 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', mLine, ...mediaLines);
}
