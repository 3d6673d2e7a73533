/**
 * `/v1/stt/stream` (spec 4.6, 6.2): a recognition session driven by WebSocket frames. The
 * client sends `config`, then audio (`audio.append` with base64 PCM16, or binary PCM16 frames)
 * and `audio.end`; the service answers `session.ready`, `transcript.partial` every 250 ms of
 * speech, `transcript.final` at each end of utterance and at the end, then `session.complete`.
 * A bad frame gets an `error` frame (flat: code, message, request_id) and the session stays
 * usable; an error the session cannot go on after also closes the socket.
 */
import type { WebSocket } from 'ws';
import { RecognitionCapacityError } from '../../engine/stt/capacity.js';
import type { RecognisedWord } from '../../engine/types.js';
import { STT_STREAM_RATE_HZ } from '../catalog/limits.js';
import { ApiError, type ErrorCode } from '../api/errors.js';
import { enginesFor } from '../speech/live-recognition.js';
import { checkVocabularyTerms, parseLanguageCandidates } from '../speech/recognition-request.js';
import { RecognitionSession } from '../speech/recognition-session.js';
import type { BudgetLease } from '../metering/budget-lease.js';
import { AudioArrivals } from './audio-arrivals.js';
import { FrameChannel, parseClientFrame, type RealtimeContext } from './frame-channel.js';

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/**
 * Audio a client may send ahead of real time. Beyond it the socket is read no further until
 * real time catches up, so a sender that floods the session waits in TCP instead of in the
 * recogniser's queue (recorded audio can still be streamed: 20 s ahead, then at real time).
 */
export const MAX_AUDIO_AHEAD_SECONDS = 20;

function wordsOut(words: readonly RecognisedWord[]): RecognisedWord[] {
  return words.map((word) => ({ w: word.w, start: round(word.start), end: round(word.end), conf: round(word.conf) }));
}

/** Serves one `/v1/stt/stream` socket until it closes. */
export function serveSttStream(socket: WebSocket, context: RealtimeContext): void {
  const channel = new FrameChannel(socket, context, 'stt');
  let session: RecognitionSession | null = null;
  let audioEnded = false;
  let startedAt = 0;
  /** When the audio arrived, to time each transcript from the audio it covers. */
  const arrivals = new AudioArrivals();
  /** The key's budget, drawn as audio arrives; recorded once, at the end or when the socket closes. */
  let budget: BudgetLease | null = null;
  const meter = async (seconds: number): Promise<void> => {
    await budget?.commit({ mode: 'realtime' }, seconds);
  };
  /** A byte of a sample split between two frames. */
  let pendingByte: number | null = null;

  const fail = async (code: ErrorCode, message: string): Promise<void> => channel.sendError(code, message);

  const open = async (frame: Record<string, unknown>): Promise<void> => {
    if (frame['lang'] !== undefined && typeof frame['lang'] !== 'string')
      throw new ApiError('stt.invalid_request', 'config.lang must be a string: one code, comma-separated candidates, or auto');
    const vocabulary = frame['vocabulary'] ?? [];
    if (!Array.isArray(vocabulary) || !vocabulary.every((term) => typeof term === 'string'))
      throw new ApiError('stt.invalid_request', 'config.vocabulary must be an array of strings');
    const candidates = parseLanguageCandidates(frame['lang'] as string | undefined);
    const terms = checkVocabularyTerms(vocabulary as string[]);
    const sandbox = context.principal.environment === 'sandbox';
    const chosen = sandbox
      ? candidates.map((language) => ({ language, engine: context.services.engines.sandbox.sttStream }))
      : enginesFor(context.services.engines.live.stt, candidates);
    const lease = await context.services.meter.lease(context.principal, 'stt', 'stt', context.requestId);
    if (channel.closed) return lease.release();
    try {
      session = new RecognitionSession(chosen, terms, STT_STREAM_RATE_HZ, channel.signal);
    } catch (error) {
      lease.release();
      if (!(error instanceof RecognitionCapacityError)) throw error;
      channel.sendError('stt.capacity', 'every recogniser of this deployment is busy; retry shortly', { close: 1013 });
      return;
    }
    budget = lease;
    channel.onClose(() => {
      const heard = session?.audioSeconds ?? 0;
      session?.close();
      void meter(heard).catch((error: unknown) => context.logger.error({ err: error }, 'metering a closed realtime session failed'));
    });
    startedAt = performance.now();
    channel.send({ type: 'session.ready', request_id: context.requestId });
    void forward(session);
  };

  const forward = async (running: RecognitionSession): Promise<void> => {
    try {
      for await (const event of running) {
        // A final is timed from the end of its utterance (spec 8: final after end of speech), a partial from the audio it had heard.
        const lagMs = arrivals.lagMs(event.type === 'final' ? event.endSeconds : event.audioSeconds);
        if (lagMs !== null) context.services.metrics.recognitionLatency.observe({ result: event.type }, lagMs / 1000);
        channel.send({
          type: event.type === 'partial' ? 'transcript.partial' : 'transcript.final',
          text: event.text,
          words: wordsOut(event.words),
          lang: event.lang,
          duration_s: round(event.audioSeconds),
        });
      }
      await meter(running.audioSeconds);
      channel.send({ type: 'session.complete', request_id: context.requestId });
      channel.close(1000, 'session complete');
    } catch (error) {
      if (channel.closed) return;
      context.logger.error({ err: error }, 'realtime recognition failed');
      channel.sendError('stt.upstream_unavailable', 'the recogniser stopped; open a new session', { close: 1011 });
    }
  };

  const appendAudio = async (bytes: Uint8Array): Promise<void> => {
    if (!session) return fail('stt.invalid_request', 'send a config frame before audio');
    if (audioEnded) return fail('stt.invalid_request', 'audio.end was sent; this session takes no more audio');
    let data = bytes;
    if (pendingByte !== null) {
      data = new Uint8Array(bytes.length + 1);
      data[0] = pendingByte;
      data.set(bytes, 1);
      pendingByte = null;
    }
    if (data.length % 2 === 1) pendingByte = data[data.length - 1]!;
    const samples = Math.floor(data.length / 2);
    if (samples === 0) return;
    // PCM16 little-endian; copied so the samples are aligned whatever the frame's offset.
    const pcm = new Int16Array(samples);
    const view = new DataView(data.buffer, data.byteOffset, samples * 2);
    for (let i = 0; i < samples; i++) pcm[i] = view.getInt16(i * 2, true);
    // Too far ahead of real time: this frame waits (and the socket is not read meanwhile).
    const ahead = session.audioSeconds + samples / STT_STREAM_RATE_HZ - (performance.now() - startedAt) / 1000;
    if (ahead > MAX_AUDIO_AHEAD_SECONDS) {
      const waitMs = (ahead - MAX_AUDIO_AHEAD_SECONDS) * 1000;
      channel.pauseReading(waitMs);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      if (channel.closed) return;
    }
    try {
      budget?.drawTo(session.audioSeconds + samples / STT_STREAM_RATE_HZ);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The key's budget ran out mid-session: what was heard is transcribed no further.
      channel.sendError(error.code, error.detail ?? error.message, { close: 1008 });
      return;
    }
    session.write(pcm);
    arrivals.arrived(session.audioSeconds);
  };

  channel.onFrame(async (data, isBinary) => {
    if (isBinary) return appendAudio(data);
    const frame = parseClientFrame(data, channel, 'stt');
    if (!frame) return;
    switch (frame['type']) {
      case 'config':
        if (session) return fail('stt.invalid_request', 'config was already sent; one config opens one session');
        try {
          await open(frame);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          // A config that names no installed language is refused; the client may send another.
          channel.sendError(error.code, error.detail ?? error.message, error.httpStatus === 429 ? { close: 1008 } : {});
        }
        return;
      case 'audio.append': {
        const encoded = frame['data'];
        if (typeof encoded !== 'string' || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
          return fail('stt.invalid_audio', 'audio.append needs data: base64 of PCM16 mono at 16 kHz');
        }
        return appendAudio(Buffer.from(encoded, 'base64'));
      }
      case 'audio.end':
        if (!session) return fail('stt.invalid_request', 'send a config frame before audio.end');
        if (audioEnded) return fail('stt.invalid_request', 'audio.end was already sent');
        audioEnded = true;
        channel.stopIdleTimer();
        session.end();
        return;
      default:
        return fail('stt.invalid_request', `unknown frame type ${JSON.stringify(frame['type'])}; expected config, audio.append or audio.end`);
    }
  });
}
