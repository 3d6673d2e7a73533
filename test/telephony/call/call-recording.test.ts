/**
 * Taking a voicemail from a call's media: the caller's speech (a real recording) is kept, with
 * at most half a second after the last words; the message ends on silence (also when the phone
 * sends nothing while its caller is quiet), on the finishing key, at the length limit or when
 * the caller hangs up; a caller who says nothing leaves no message.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { loadResampler, Resampler } from '../../../src/audio/resampler.js';
import type { RecordRequest } from '../../../src/dialplan/steps/step-context.js';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';
import { captureMessage } from '../../../src/telephony/call/call-recording.js';

/** 20 ms frames at 8 kHz of Debian's "go forward ten meters" (about 2.9 s). */
let speech: Int16Array[];
const silence = () => new Int16Array(160);

beforeAll(async () => {
  await loadResampler();
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const narrow = new Resampler(16000, 8000).process(new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)));
  speech = [];
  for (let at = 0; at + 160 <= narrow.length; at += 160) speech.push(narrow.slice(at, at + 160));
});

/** A call's media as the recording sees it: audio and keys in, the beep out. */
function fakeMedia(): MediaChannel & EventEmitter & { played: Int16Array[] } {
  const played: Int16Array[] = [];
  return Object.assign(new EventEmitter(), {
    audioRateHz: 8000,
    playbackRateHz: 8000,
    played,
    startPrompt: () => undefined,
    play: (pcm: Int16Array) => void played.push(pcm),
    endPrompt: () => undefined,
    stopPlayback: () => undefined,
    playedOut: () => Promise.resolve({ playedSeconds: 0.4, firstPacketAtMs: 0, lastVoiceAtMs: 0, complete: true }),
  }) as unknown as MediaChannel & EventEmitter & { played: Int16Array[] };
}

const request = (changes: Partial<RecordRequest> = {}): RecordRequest => ({
  beep: false,
  maxSeconds: 30,
  endSilenceMs: 600,
  timeoutMs: 1500,
  finishOnKey: '#',
  ...changes,
});

/** Sends frames at real pace (20 ms apart) while `until` is false. */
async function stream(media: EventEmitter, frames: Int16Array[], until: () => boolean = () => false): Promise<void> {
  for (const frame of frames) {
    if (until()) return;
    media.emit('audio', frame);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a voicemail from the call media', () => {
  it('keeps the speech and at most half a second after it; silence ends it, even with no packets at all', async () => {
    for (const sendSilence of [true, false]) {
      const media = fakeMedia();
      let done = false;
      const message = captureMessage(media, request({ beep: true }), new AbortController().signal).finally(() => (done = true));
      // The caller speaks once the beep is over and the recording listens (however busy the machine).
      await eventually(() => media.listenerCount('audio') > 0, 2000, 'the recording to listen');
      await stream(media, speech);
      if (sendSilence) await stream(media, Array.from({ length: 100 }, silence), () => done);
      const captured = await message;
      expect(captured).toMatchObject({ endedBy: 'silence', spoke: true, sampleRateHz: 8000 });
      const seconds = captured.pcm.length / 8000;
      expect(seconds).toBeGreaterThan(speech.length * 0.02 - 0.6);
      expect(seconds).toBeLessThanOrEqual(speech.length * 0.02 + 0.5);
      // The first samples are the caller's first frame, unchanged.
      expect(Array.from(captured.pcm.subarray(0, 160))).toEqual(Array.from(speech[0]!));
      // The beep: 400 ms at 1 kHz.
      expect(media.played[0]!.length).toBe(3200);
    }
  });

  it('ends on the finishing key, at the length limit, and when the caller hangs up (the message is kept)', async () => {
    const keyed = fakeMedia();
    const byKey = captureMessage(keyed, request(), new AbortController().signal);
    await stream(keyed, speech.slice(0, 50));
    keyed.emit('dtmf', '5', 'rfc4733');
    keyed.emit('dtmf', '#', 'rfc4733');
    expect(await byKey).toMatchObject({ endedBy: 'key', spoke: true });

    const long = fakeMedia();
    const byLength = captureMessage(long, request({ maxSeconds: 1 }), new AbortController().signal);
    await stream(long, speech.slice(0, 80));
    const limited = await byLength;
    expect(limited.endedBy).toBe('max_length');
    expect(limited.pcm.length / 8000).toBeLessThanOrEqual(1);

    const hanging = fakeMedia();
    const call = new AbortController();
    const byHangup = captureMessage(hanging, request(), call.signal);
    await stream(hanging, speech.slice(0, 60));
    call.abort();
    const kept = await byHangup;
    expect(kept).toMatchObject({ endedBy: 'hangup', spoke: true });
    expect(kept.pcm.length).toBeGreaterThan(40 * 160);
  });

  it('leaves no message when the caller says nothing', async () => {
    const media = fakeMedia();
    let done = false;
    const message = captureMessage(media, request(), new AbortController().signal).finally(() => (done = true));
    await stream(media, Array.from({ length: 150 }, silence), () => done);
    expect(await message).toMatchObject({ endedBy: 'no_input', spoke: false });
    expect((await message).pcm.length).toBe(0);
  });
});
