/**
 * Taking a voicemail on a call: a beep, then the caller's audio until they have been silent
 * for `endSilenceMs` after speaking, pressed the finishing key, reached the length limit or hung
 * up. Voice is told from silence by the WebRTC voice activity detector, on this thread (one
 * detector per recording; a 20 ms frame costs microseconds). The limits are kept by the clock,
 * not by counting frames: a phone that suppresses silence sends no packets at all while its
 * caller is quiet.
 */
import { loadWebRtcVad, WebRtcVad } from '../../../engine/vad/webrtc-vad.js';
import { concatPcm } from '../../audio/pcm.js';
import type { RecordOutcome, RecordRequest } from '../../dialplan/steps/step-context.js';
import type { MediaChannel } from '../media/media-channel.js';
import { BEEP, playTone } from './tones.js';

/** The caller's message as heard. */
export interface CapturedMessage {
  /** The audio, without the silence after the last words beyond {@link KEPT_SILENCE_MS}. */
  readonly pcm: Int16Array;
  readonly sampleRateHz: number;
  readonly endedBy: RecordOutcome['endedBy'];
  /** The caller's voice was heard at all. */
  readonly spoke: boolean;
}

/** Voiced frames in a row that count as speech (60 ms, as the call's barge-in detection). */
const SPEECH_FRAMES = 3;
/** Silence kept after the last words: the message does not end abruptly, nor with seconds of nothing. */
const KEPT_SILENCE_MS = 500;
const FRAME_MS = 20;
/** How often the clock limits are checked. */
const CHECK_MS = 50;

/** Plays the beep and records the caller's message. */
export async function captureMessage(media: MediaChannel, request: RecordRequest, signal: AbortSignal): Promise<CapturedMessage> {
  await loadWebRtcVad();
  if (request.beep) await playTone(media, BEEP, signal);
  const sampleRateHz = media.audioRateHz;
  const vad = WebRtcVad.create(sampleRateHz, 2);
  const frames: Int16Array[] = [];
  let voicedRun = 0;
  let lastVoiceFrame = -1;
  const startedAt = performance.now();
  let lastVoiceAt = 0;
  return await new Promise<CapturedMessage>((resolve) => {
    let settled = false;
    const finish = (endedBy: RecordOutcome['endedBy']): void => {
      if (settled) return;
      settled = true;
      clearInterval(clock);
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      signal.removeEventListener('abort', onHangup);
      vad.close();
      const spoke = lastVoiceFrame >= 0;
      const keep = spoke ? Math.min(frames.length, lastVoiceFrame + 1 + KEPT_SILENCE_MS / FRAME_MS) : 0;
      resolve({ pcm: concatPcm(frames.slice(0, keep)), sampleRateHz, endedBy: spoke || endedBy !== 'silence' ? endedBy : 'no_input', spoke });
    };
    const onAudio = (pcm: Int16Array): void => {
      // A copy: the frame is a view into the media thread's batch of every call's audio.
      frames.push(pcm.slice());
      voicedRun = vad.isSpeech(pcm) ? voicedRun + 1 : 0;
      if (voicedRun >= SPEECH_FRAMES) {
        lastVoiceFrame = frames.length - 1;
        lastVoiceAt = performance.now();
      }
      if (frames.length * FRAME_MS >= request.maxSeconds * 1000) finish('max_length');
    };
    const clock = setInterval(() => {
      const now = performance.now();
      if (now - startedAt >= request.maxSeconds * 1000) finish('max_length');
      else if (lastVoiceFrame < 0 && now - startedAt >= request.timeoutMs) finish('no_input');
      else if (lastVoiceFrame >= 0 && now - lastVoiceAt >= request.endSilenceMs) finish('silence');
    }, CHECK_MS);
    const onKey = (key: string): void => {
      if (request.finishOnKey !== '' && key === request.finishOnKey) finish('key');
    };
    const onHangup = (): void => finish('hangup');
    if (signal.aborted) return onHangup();
    media.on('audio', onAudio);
    media.on('dtmf', onKey);
    signal.addEventListener('abort', onHangup, { once: true });
  });
}
