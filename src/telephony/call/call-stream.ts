/**
 * The phone side of the `stream` step: connects to the bot and runs the bridge of the step's
 * mode over the call's media — Twilio Media Streams audio (bots/media-stream-bridge.ts) or
 * transcripts and text to speak (bots/text-stream-bridge.ts), the latter with a recogniser
 * held for the whole stream.
 */
import type { Logger } from 'pino';
import type { EngineRegistry } from '../../../engine/registry.js';
import { RecognitionCapacityError } from '../../../engine/stt/capacity.js';
import { runMediaStream } from '../../bots/media-stream-bridge.js';
import { connectBot } from '../../bots/stream-connection.js';
import { runTextStream, type TextStreamCall } from '../../bots/text-stream-bridge.js';
import type { StreamOutcome, StreamRequest } from '../../dialplan/steps/step-context.js';
import { RecognitionSession } from '../../speech/recognition-session.js';
import type { MediaChannel } from '../media/media-channel.js';
import { LISTEN_END_SILENCE_MS, type RouteEngines } from './call-turns.js';

/** What a stream needs of the call. */
export interface StreamingCall extends Omit<TextStreamCall, 'recognition' | 'media'> {
  readonly media: MediaChannel;
  readonly engines: EngineRegistry;
  readonly choice: RouteEngines;
  readonly logger: Logger;
  /** Seconds of caller audio recognised, for metering. */
  recognised(seconds: number): void;
}

/** Connects to the bot and bridges the call to it until the stream ends. */
export async function streamToBot(call: StreamingCall, request: StreamRequest, signal: AbortSignal): Promise<StreamOutcome> {
  let recognition: RecognitionSession | null = null;
  if (request.mode === 'text') {
    const language = call.voice.language;
    const engine = call.choice === 'synthetic' ? call.engines.sandbox.sttStream : call.engines.live.stt.engineFor(language);
    if (!engine) return { result: 'failed', reason: `no recogniser for ${language} is installed` };
    try {
      recognition = new RecognitionSession([{ language, engine }], [], call.media.audioRateHz, signal, LISTEN_END_SILENCE_MS);
    } catch (error) {
      if (!(error instanceof RecognitionCapacityError)) throw error;
      return { result: 'failed', reason: 'no recogniser is free' };
    }
  }
  const socket = await connectBot({ url: request.url, headers: request.headers, secret: request.secret, timeoutMs: request.connectTimeoutMs }, signal);
  if (!('send' in socket)) {
    recognition?.close();
    return { result: 'failed', reason: socket.failure };
  }
  call.logger.info({ url: request.url, mode: request.mode }, 'bot stream open');
  const outcome =
    recognition === null
      ? await runMediaStream(
          socket,
          { media: call.media, callId: call.call.id, route: call.call.route, parameters: request.parameters, logger: call.logger },
          signal,
        )
      : await runTextStream(socket, { ...call, recognition }, signal);
  if (recognition) call.recognised(recognition.audioSeconds);
  call.logger.info({ url: request.url, result: outcome.result, reason: outcome.reason }, 'bot stream done');
  return outcome;
}
