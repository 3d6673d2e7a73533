/**
 * A call bridged to a bot that speaks Twilio's Media Streams protocol (`stream` step, `media`
 * mode): the caller's audio goes to the bot as 20 ms µ-law `media` messages, keys as `dtmf`;
 * the bot's `media` is queued in order and paced onto the call by the media thread, its marks
 * come back once the audio before them has been played, and `clear` drops what is queued at
 * once. The messages are in stream-messages.ts.
 *
 * A bot may send audio faster than real time (a synthesiser's whole answer at once). It is
 * queued, up to {@link MAX_QUEUED_SECONDS} ahead of what the caller hears; beyond that the bot's
 * socket is no longer read (TCP holds the bot back) until the queue is down to
 * {@link RESUME_QUEUED_SECONDS}. So a call's memory for bot audio is bounded, nothing the bot
 * sent is dropped, and the caller hears it at the pace of the call.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { decodeMulaw, encodeMulaw } from '../audio/g711.js';
import { Resampler } from '../audio/resampler.js';
import type { StreamOutcome } from '../dialplan/steps/step-context.js';
import type { MediaChannel } from '../telephony/media/media-channel.js';
import { watchBotSocket } from './bot-socket-watch.js';
import { readMediaMessage } from './stream-inbound.js';
import type { MediaOut } from './stream-messages.js';

/** Bot audio queued ahead of the caller's ear beyond which its socket is not read. */
export const MAX_QUEUED_SECONDS = 60;
/** The queue's length at which the socket is read again. */
export const RESUME_QUEUED_SECONDS = 50;
/** What we may have sent that the bot has not read yet (about 40 s of caller audio); beyond it the bot has failed. */
const MAX_UNREAD_BYTES = 1024 * 1024;
/** Twilio's audio: µ-law at 8000 Hz, 20 ms per message. */
const RATE_HZ = 8000;
const FRAME_SAMPLES = 160;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The call as the bridge sees it. */
export interface MediaStreamCall {
  readonly media: MediaChannel;
  /** The SIP Call-ID (the bot sees it as a Twilio-shaped callSid). */
  readonly callId: string;
  /** The dialplan route's number (the accountSid is derived from it). */
  readonly route: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly logger: Logger;
}

/** Twilio-shaped ids: a prefix and 32 hex digits. */
function sid(prefix: string, from: string): string {
  return prefix + createHash('sha256').update(from).digest('hex').slice(0, 32);
}

/** Runs the stream until the bot closes the socket, fails, or the call ends. */
export function runMediaStream(socket: WebSocket, call: MediaStreamCall, signal: AbortSignal): Promise<StreamOutcome> {
  const { media, logger } = call;
  const streamSid = `MZ${randomBytes(16).toString('hex')}`;
  const callSid = sid('CA', call.callId);
  const accountSid = sid('AC', `sprachrohr route ${call.route}`);
  const startedAt = performance.now();
  let sequence = 0;
  let chunk = 0;
  // When the audio queued so far will have played out, on this thread's clock.
  let playheadMs = performance.now();
  let paused = false;
  let resumeTimer: NodeJS.Timeout | null = null;
  let ignored = 0;
  // Opus calls hear and play at other rates than Twilio's 8000 Hz.
  const down = media.audioRateHz === RATE_HZ ? null : new Resampler(media.audioRateHz, RATE_HZ);
  let up = media.playbackRateHz === RATE_HZ ? null : new Resampler(RATE_HZ, media.playbackRateHz);
  let heard = new Int16Array(0);

  const send = (message: MediaOut): void => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  };
  const next = (): string => String(++sequence);

  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: StreamOutcome): void => {
      if (done) return;
      done = true;
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      unwatch();
      if (resumeTimer) clearTimeout(resumeTimer);
      // A socket held back is read again, so that its close can complete.
      if (paused) socket.resume();
      down?.destroy();
      up?.destroy();
      if (ignored > 0) logger.info({ ignored }, 'bot messages ignored');
      resolve(outcome);
    };

    const onAudio = (pcm: Int16Array): void => {
      const samples = down ? down.process(pcm) : pcm;
      let audio = samples;
      if (heard.length > 0) {
        audio = new Int16Array(heard.length + samples.length);
        audio.set(heard);
        audio.set(samples, heard.length);
      }
      let at = 0;
      for (; at + FRAME_SAMPLES <= audio.length; at += FRAME_SAMPLES) {
        const payload = Buffer.from(encodeMulaw(audio.subarray(at, at + FRAME_SAMPLES))).toString('base64');
        const timestamp = String(Math.round(performance.now() - startedAt));
        send({ event: 'media', sequenceNumber: next(), media: { track: 'inbound', chunk: String(++chunk), timestamp, payload }, streamSid });
      }
      heard = audio.slice(at);
      if (socket.bufferedAmount > MAX_UNREAD_BYTES) fail('the bot does not read its socket');
    };

    const onKey = (digit: string): void => {
      send({ event: 'dtmf', streamSid, sequenceNumber: next(), dtmf: { track: 'inbound_track', digit } });
    };

    const play = (payload: string): void => {
      if (!BASE64.test(payload) || payload.length % 4 !== 0) return void ignore('media: the payload is not base64');
      const bytes = Buffer.from(payload, 'base64');
      const pcm = decodeMulaw(bytes);
      media.play(up ? up.process(pcm) : pcm);
      playheadMs = Math.max(playheadMs, performance.now()) + (bytes.length / RATE_HZ) * 1000;
      holdBackIfAhead();
    };

    /** Stops reading the bot while too much is queued; reads again once enough has played. */
    const holdBackIfAhead = (): void => {
      const aheadMs = playheadMs - performance.now();
      if (paused || aheadMs <= MAX_QUEUED_SECONDS * 1000) return;
      paused = true;
      socket.pause();
      logger.info({ aheadSeconds: Math.round(aheadMs / 1000) }, 'bot ahead: not reading');
      resumeTimer = setTimeout(
        () => {
          resumeTimer = null;
          paused = false;
          socket.resume();
        },
        aheadMs - RESUME_QUEUED_SECONDS * 1000,
      );
    };

    const clear = (): void => {
      // A new prompt drops every queued frame in the media thread; its marks come back unplayed.
      media.startPrompt(false);
      playheadMs = performance.now();
      if (up) {
        up.destroy();
        up = new Resampler(RATE_HZ, media.playbackRateHz);
      }
      if (paused) {
        if (resumeTimer) clearTimeout(resumeTimer);
        resumeTimer = null;
        paused = false;
        socket.resume();
      }
    };

    const onMessage = (data: WebSocket.RawData, isBinary: boolean): void => {
      const read = readMediaMessage(data, isBinary);
      if ('problem' in read) return ignore(read.problem);
      const message = read.message;
      switch (message.event) {
        case 'media':
          return play(message.media.payload);
        case 'mark': {
          const name = message.mark.name;
          // Twilio sends a mark back both when its audio has played and when clear dropped it.
          void media.markPlayout(true).then((played) => {
            if (played !== null) send({ event: 'mark', sequenceNumber: next(), streamSid, mark: { name } });
          });
          return;
        }
        case 'clear':
          return clear();
      }
    };

    const ignore = (problem: string): void => {
      ignored += 1;
      // The first few are worth a line in the log; a bot that sends nonsense all along is not worth thousands.
      if (ignored <= 5) logger.warn({ problem }, 'bot message ignored');
    };

    /** What the bot sent before closing is still said, then the dialplan goes on. */
    const closed = (): void => {
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      void media.markPlayout(true).then(() => finish({ result: 'closed', reason: 'the bot closed the connection' }));
    };
    const fail = (reason: string): void => {
      socket.terminate();
      media.startPrompt(false);
      finish({ result: 'failed', reason });
    };
    const onCallEnded = (): void => {
      send({ event: 'stop', sequenceNumber: next(), streamSid, stop: { accountSid, callSid } });
      socket.close(1000, 'the call ended');
      finish({ result: 'ended', reason: 'the call ended' });
    };

    const unwatch = watchBotSocket(socket, signal, { message: onMessage, closed, failed: fail, callEnded: onCallEnded });
    if (signal.aborted) return;
    media.startPrompt(false);
    send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    send({
      event: 'start',
      sequenceNumber: next(),
      start: {
        streamSid,
        accountSid,
        callSid,
        tracks: ['inbound'],
        customParameters: { ...call.parameters },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid,
    });
    media.on('audio', onAudio);
    media.on('dtmf', onKey);
  });
}
