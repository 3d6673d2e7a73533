/**
 * A real user agent against the gateway: baresip from Debian, headless and offering nothing
 * but Opus, calls a menu route. Its audio comes from a WAV file (English menu words spoken by
 * eSpeak, placed after the greeting) and what it receives is recorded to a WAV file. The call
 * must be answered with Opus, the word must reach the recogniser (pocketsphinx at 16 kHz with
 * the route's vocabulary as its grammar), and the recording must hold the greeting and the
 * reply: speech as long as the same texts synthesised here.
 */
import { join } from 'node:path';
import { capturedLogger } from '../helpers/captured-logger.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatPcm } from '../../src/audio/pcm.js';
import { TelephonyService } from '../../src/telephony/telephony-service.js';
import { Baresip, requireBaresip, writeWav } from '../helpers/baresip.js';
import { SpeechAudio, silencePcm } from '../helpers/speech-audio.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const GREETING = 'Welcome. Say billing, support or sales.';
const WORD = 'billing';
const REPLY = `You said ${WORD}.`;
const VOICE = 'jonas';
/** Opus runs at 48 kHz: baresip's file source must have the codec's rate. */
const RATE = 48000;

const DIALPLAN = `name: menu
routes:
  - number: "menu"
    engines: live
    language: en
    voice: ${VOICE}
    steps:
      - answer: {}
      - say:
          text: ${GREETING}
          barge_in: false
      - listen:
          vocabulary: [billing, support, sales]
          dtmf: false
          timeout_ms: 6000
          max_ms: 10000
      - say:
          text: "You said {{heard}}."
          barge_in: false
      - hangup: {}
`;

/** 20 ms frames louder than this RMS count as speech. */
const LOUD_RMS = 500;

/** Seconds of 20 ms frames whose RMS is above {@link LOUD_RMS}. */
function loudSeconds(pcm: Int16Array, rateHz: number): number {
  const frame = rateHz / 50;
  let loud = 0;
  for (let at = 0; at + frame <= pcm.length; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += pcm[i]! * pcm[i]!;
    if (Math.sqrt(sum / frame) > LOUD_RMS) loud += 1;
  }
  return loud * 0.02;
}

let telephony: StartedTelephony;
let service: TelephonyService;
let speech: SpeechAudio;
let logs: Array<Record<string, unknown>> = [];
/** The texts the gateway speaks, synthesised here: their lengths, and the loud seconds of each. */
let expected: { greetingSeconds: number; replySeconds: number; greetingLoudSeconds: number; replyLoudSeconds: number };
let callerWav: string;

beforeAll(async () => {
  // The project installs baresip-core wherever the tests run: a missing one fails here.
  await requireBaresip();
  speech = await SpeechAudio.start();
  const greeting = await speech.speak(GREETING, RATE, 'en', VOICE);
  const reply = await speech.speak(REPLY, RATE, 'en', VOICE);
  const word = await speech.speak(WORD, RATE, 'en', VOICE);
  expected = {
    greetingSeconds: greeting.length / RATE,
    replySeconds: reply.length / RATE,
    greetingLoudSeconds: loudSeconds(greeting, RATE),
    replyLoudSeconds: loudSeconds(reply, RATE),
  };
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    DIALPLAN,
    {
      SPRACHROHR_TTS_ENGINE: 'espeak',
      SPRACHROHR_STT_ENGINE: 'pocketsphinx',
      SPRACHROHR_TTS_WORKERS: '1',
      SPRACHROHR_STT_WORKERS: '1',
      SPRACHROHR_RTP_PORTS: '31400-31419',
    },
    { logger: captured.logger },
  );
  service = telephony.service;
  // The caller says its word 1.5 s after the greeting ends (the greeting cannot be interrupted),
  // then stays silent until the gateway hangs up: the file must outlast the call.
  callerWav = join(telephony.dir, 'caller.wav');
  await writeWav(callerWav, concatPcm([silencePcm(expected.greetingSeconds + 1.5, RATE), word, silencePcm(10, RATE)]), RATE);
}, 30_000);

afterAll(async () => {
  await telephony?.close();
  await speech?.close();
});

describe('baresip calls the gateway', () => {
  it('with Opus: its spoken menu word is recognised, and it hears the greeting and the reply', async () => {
    const baresip = await Baresip.start({ audioSource: callerWav, codecs: 'opus/48000/2', rtpPorts: { min: 31500, max: 31599 } });
    try {
      const gateway = `127.0.0.1:${service.endpoint.ports.udp}`;
      await baresip.dial(`sip:menu@${gateway}`);
      // The gateway hangs up after its reply.
      await baresip.waitFor(/Call with sip:menu@\S+ terminated/, 25_000);

      // Answered with Opus, and only Opus, at the payload type baresip offered.
      const messages = baresip.sipMessages();
      const invite = messages.find((message) => message.startLine.startsWith('INVITE '));
      const ok = messages.find(
        (message) => message.from === gateway && message.startLine === 'SIP/2.0 200 OK' && message.headers.get('cseq')?.endsWith('INVITE'),
      );
      expect(invite, baresip.tail()).toBeDefined();
      expect(ok, baresip.tail()).toBeDefined();
      const offered = /^a=rtpmap:(\d+) opus\/48000\/2\r?$/m.exec(invite!.body);
      expect(offered).not.toBeNull();
      expect(invite!.body).not.toMatch(/rtpmap:\d+ PCM[UA]/);
      expect(ok!.body).toMatch(new RegExp(`^m=audio \\d+ RTP/AVP ${offered![1]}\\r?$`, 'm'));
      expect(ok!.body).toMatch(new RegExp(`^a=rtpmap:${offered![1]} opus/48000/2\\r?$`, 'm'));
      expect(baresip.output).toMatch(/Set audio decoder: opus 48000Hz/);
      expect(baresip.output).toMatch(/Set audio encoder: opus 48000Hz/);
      // The gateway ended the call with a BYE.
      expect(messages.some((message) => message.from === gateway && message.startLine.startsWith('BYE '))).toBe(true);

      // The recogniser heard the caller's word.
      const listened = logs.filter((line) => line['msg'] === 'listened');
      expect(listened).toHaveLength(1);
      expect(listened[0]).toMatchObject({ reason: 'speech' });
      expect(String(listened[0]!['heard']).split(/\s+/)).toContain(WORD);
      expect(logs.some((line) => line['msg'] === 'call step failed')).toBe(false);
      expect(service.stats.usage).toHaveLength(1);
      const usage = service.stats.usage[0]!;
      expect(usage.sttSeconds).toBeGreaterThan(0);
      expect(usage.ttsSeconds).toBeGreaterThan((expected.greetingSeconds + expected.replySeconds) * 0.7);
      expect(usage.ttsSeconds).toBeLessThan((expected.greetingSeconds + expected.replySeconds) * 1.3);

      // What baresip received, decoded: the greeting, then the reply (sndfile writes what
      // arrives, so the silence between them may be missing), as long as eSpeak makes them.
      await baresip.quit();
      const { received } = await baresip.recordings();
      expect(received.sampleRateHz).toBe(RATE);
      expect(received.seconds).toBeGreaterThan((expected.greetingSeconds + expected.replySeconds) * 0.7);
      expect(received.seconds).toBeLessThan((expected.greetingSeconds + expected.replySeconds) * 1.3);
      const split = Math.round(expected.greetingSeconds * RATE);
      const heard = { greeting: loudSeconds(received.pcm.subarray(0, split), RATE), reply: loudSeconds(received.pcm.subarray(split), RATE) };
      expect(heard.greeting).toBeGreaterThan(expected.greetingLoudSeconds * 0.7);
      expect(heard.greeting).toBeLessThan(expected.greetingLoudSeconds * 1.3);
      expect(heard.reply).toBeGreaterThan(expected.replyLoudSeconds * 0.7);
      expect(heard.reply).toBeLessThan(expected.replyLoudSeconds * 1.3);
    } finally {
      await baresip.close();
    }
  }, 40_000);
});
