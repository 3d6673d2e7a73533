/**
 * `/v1/tts/stream` (spec 4.2, 6.1): a synthesis session driven by WebSocket frames. The client
 * sends `session.start`, then `text.append` as its text arrives (`text.flush` forces out a
 * partial sentence) and `session.end`; the service speaks each sentence as soon as it is
 * complete into one continuous audio stream, cut into frames of exactly `frame_bytes` (the last
 * may be shorter), as `audio.chunk` JSON frames or raw binary frames. Error frames are nested:
 * `{type: "error", error: {code, message, detail, request_id}}`.
 */
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import type { WebSocket } from 'ws';
import type { TtsEngine } from '../../engine/types.js';
import { LIMITS } from '../catalog/limits.js';
import { ApiError, type ErrorCode } from '../api/errors.js';
import { SYNTHESIS_FIELD_ERRORS, SynthesisRequestSchema, type SynthesisRequestBody } from '../api/schemas.js';
import { planSynthesis, type SynthesisPlan } from '../speech/synthesis-request.js';
import { SpeechAhead, SynthesisSession } from '../speech/synthesis-service.js';
import { BRISK_CHARACTERS_PER_SECOND } from '../speech/speech-length.js';
import { TextSegmenter } from '../speech/text-segmenter.js';
import type { BudgetLease } from '../metering/budget-lease.js';
import { FrameChannel, parseClientFrame, type RealtimeContext } from './frame-channel.js';

/** Formats that can be cut into frames as they are made. */
const STREAMABLE_FORMATS = ['pcm16', 'mulaw', 'alaw', 'opus'];
/** Bytes of one Ogg Opus frame: about 170 ms at the encoder's rate, so little waits. */
const OPUS_FRAME_BYTES = 512;
/**
 * Sentences synthesised ahead of the one being sent: the engine works on them while earlier
 * audio goes out, so a started stream does not stall between sentences (more would only hold
 * audio in memory).
 */
const SEGMENTS_AHEAD = 2;
/** Text that may wait to be spoken before appends are refused. */
const MAX_PENDING_CHARACTERS = 4 * LIMITS.ttsMaxTextCharacters;

/** `session.start`: the fields of a synthesis request without its text, and the transport. */
const { text: _text, output: _output, ...requestFields } = SynthesisRequestSchema.properties;
const SessionStartSchema = Type.Object(
  { type: Type.Literal('session.start'), ...requestFields, transport: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('binary')])) },
  { additionalProperties: false },
);

/** The same JSON Schema checks `POST /v1/tts` gets from fastify, compiled once. */
const validateStart = new Ajv({ allErrors: false, strict: false }).compile(SessionStartSchema);

/** The error of the first problem with a `session.start` frame, coded as `POST /v1/tts` codes it. */
function startFrameError(frame: Record<string, unknown>): ApiError | null {
  if (validateStart(frame)) return null;
  const first = validateStart.errors![0]!;
  if (first.keyword === 'additionalProperties')
    return new ApiError('tts.invalid_request', `unknown field "${String(first.params['additionalProperty'])}" in session.start`);
  const field = first.instancePath.split('/')[1] ?? '';
  const table = SYNTHESIS_FIELD_ERRORS[`/${field}`];
  const code: ErrorCode = table?.[first.keyword] ?? table?.['*'] ?? 'tts.invalid_request';
  return new ApiError(code, `session.start${field ? `.${field}` : ''} ${first.message ?? 'is not valid'}`);
}

/** Bytes per frame: 20 ms of PCM or G.711 (a telephony packet), or a slice of the Ogg stream. */
function frameBytesOf(plan: SynthesisPlan): number {
  if (plan.format.id === 'opus') return OPUS_FRAME_BYTES;
  return (plan.sampleRateHz / 50) * (plan.format.id === 'pcm16' ? 2 : 1);
}

/** Cuts a byte stream into frames of one size; the remainder waits for more or for the end. */
class Framer {
  private held: Buffer = Buffer.alloc(0);

  constructor(private readonly size: number) {}

  push(bytes: Buffer): Buffer[] {
    this.held = this.held.length === 0 ? bytes : Buffer.concat([this.held, bytes]);
    const frames: Buffer[] = [];
    let at = 0;
    for (; at + this.size <= this.held.length; at += this.size) frames.push(this.held.subarray(at, at + this.size));
    this.held = this.held.subarray(at);
    return frames;
  }

  /** The last, shorter frame (if any bytes wait). */
  end(): Buffer[] {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest.length > 0 ? [rest] : [];
  }
}

/** Serves one `/v1/tts/stream` socket until it closes. */
export function serveTtsStream(socket: WebSocket, context: RealtimeContext): void {
  const channel = new FrameChannel(socket, context, 'tts');
  const segmenter = new TextSegmenter();
  const sandbox = context.principal.environment === 'sandbox';
  let start: { fields: Omit<SynthesisRequestBody, 'text'>; plan: SynthesisPlan; binary: boolean; framer: Framer; session: SynthesisSession } | null = null;
  /** Texts waiting for their synthesis to start. */
  const waiting: string[] = [];
  /** Syntheses started, in order; the first is being sent. */
  const started: Array<{ text: string; plan: SynthesisPlan; ahead: SpeechAhead }> = [];
  let consuming = false;
  const idleWaiters: Array<() => void> = [];
  let queuedCharacters = 0;
  let seq = 0;
  let segments = 0;
  let ending = false;
  /** The key's budget, drawn as audio is made; recorded once, at the end or when the socket closes. */
  let budget: BudgetLease | null = null;
  const meter = async (seconds: number): Promise<void> => {
    await budget?.commit({ mode: 'realtime' }, seconds);
  };

  /** When the session's first text arrived, until its first audio goes out (time to first audio). */
  let firstTextAtMs: number | null = null;
  const sendAudio = async (frame: Buffer): Promise<boolean> => {
    if (!start) return false;
    if (firstTextAtMs !== null) {
      context.services.metrics.firstAudio.observe({ transport: 'realtime' }, (performance.now() - firstTextAtMs) / 1000);
      firstTextAtMs = null;
    }
    const sent = start.binary
      ? await channel.sendWhenRoom(frame)
      : await channel.sendWhenRoom({
          type: 'audio.chunk',
          seq,
          encoding: start.plan.format.id,
          sample_rate_hz: start.plan.sampleRateHz,
          data: frame.toString('base64'),
        });
    if (sent) seq += 1;
    return sent;
  };

  /** Starts the syntheses of waiting texts, up to {@link SEGMENTS_AHEAD} beyond the one being sent. */
  const startWaiting = (): void => {
    while (start && !channel.closed && started.length <= SEGMENTS_AHEAD && waiting.length > 0) {
      const text = waiting.shift()!;
      let plan: SynthesisPlan;
      try {
        plan = planSynthesis({ ...start.fields, text }, false);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        // One bad segment (broken markup) is refused; the session goes on with the next.
        queuedCharacters -= text.length;
        channel.sendError(error.code, error.detail ?? error.message);
        continue;
      }
      const engine: TtsEngine | null = sandbox
        ? context.services.engines.sandbox.tts
        : context.services.engines.ttsFor(plan.model, plan.voice, plan.speech.document);
      if (!engine) {
        channel.sendError('tts.unavailable', 'no speech synthesis engine is running on this deployment; sandbox keys (sv_test_…) work', { close: 1011 });
        return;
      }
      // Sentences ahead of the one being sent are needed only once the audio before them has
      // played: counted at a brisk speaking rate, so the estimate errs early, never late.
      const aheadSeconds = started.reduce((sum, segment) => sum + segment.plan.speech.characters, 0) / BRISK_CHARACTERS_PER_SECOND;
      started.push({
        text,
        plan,
        ahead: new SpeechAhead({ engine, dialect: context.services.engines.dialect }, plan, channel.signal, performance.now() + aheadSeconds * 1000),
      });
    }
    if (!consuming) void consume();
  };

  /** Sends the started syntheses in order, each as one segment of the stream. */
  const consume = async (): Promise<void> => {
    consuming = true;
    try {
      while (start && !channel.closed && started.length > 0) {
        const { text, plan, ahead } = started[0]!;
        const before = start.session.durationSeconds;
        for await (const output of start.session.speakAhead(ahead)) {
          if (output.type === 'mark') {
            channel.send({ type: 'mark', name: output.name, offset_seconds: output.offsetSeconds });
            continue;
          }
          for (const frame of start.framer.push(output.bytes)) if (!(await sendAudio(frame))) return;
        }
        started.shift();
        queuedCharacters -= text.length;
        segments += 1;
        context.services.stats.syntheses++;
        channel.send({
          type: 'segment.done',
          characters: plan.speech.characters,
          duration_seconds: Math.round((start.session.durationSeconds - before) * 1000) / 1000,
          cache: 'miss',
        });
        startWaiting();
      }
    } catch (error) {
      if (channel.closed) return;
      if (error instanceof ApiError && error.httpStatus === 429) {
        // The key's budget ran out while this session spoke: told, and closed like a refused start.
        channel.sendError(error.code, error.detail ?? error.message, { close: 1008 });
        return;
      }
      context.logger.error({ err: error, requestId: context.requestId }, 'realtime synthesis failed');
      const code: ErrorCode = error instanceof ApiError ? error.code : 'tts.internal_error';
      channel.sendError(code, 'the synthesis failed; open a new session', { close: 1011 });
    } finally {
      consuming = false;
      if (started.length === 0 && waiting.length === 0) for (const wake of idleWaiters.splice(0)) wake();
    }
  };

  const enqueue = (texts: string[]): void => {
    if (seq === 0 && firstTextAtMs === null && texts.length > 0) firstTextAtMs = performance.now();
    for (const text of texts) {
      queuedCharacters += text.length;
      waiting.push(text);
    }
    startWaiting();
  };

  /** Resolves once every text given so far has been spoken (or the session closed). */
  const whenIdle = (): Promise<void> =>
    started.length === 0 && waiting.length === 0 && !consuming ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));

  const complete = async (): Promise<void> => {
    await whenIdle();
    if (!start || channel.closed) return;
    for (const bytes of start.session.finish()) for (const frame of start.framer.push(bytes)) if (!(await sendAudio(frame))) return;
    for (const frame of start.framer.end()) if (!(await sendAudio(frame))) return;
    const duration = start.session.durationSeconds;
    await meter(duration);
    channel.send({ type: 'session.complete', duration_seconds: Math.round(duration * 1000) / 1000, frames: seq, cache: { hits: 0, misses: segments } });
    channel.close(1000, 'session complete');
  };

  channel.onClose(() => {
    void meter(start?.session.durationSeconds ?? 0).catch((error: unknown) =>
      context.logger.error({ err: error }, 'metering a closed realtime session failed'),
    );
    start?.session.abandon();
    for (const wake of idleWaiters.splice(0)) wake();
  });

  channel.onFrame(async (data, isBinary) => {
    if (isBinary) return channel.sendError('tts.invalid_request', 'this endpoint takes JSON text frames; audio goes the other way');
    const frame = parseClientFrame(data, channel, 'tts');
    if (!frame) return;
    if (ending) return channel.sendError('tts.invalid_request', 'session.end was sent; open a new session for more text');
    switch (frame['type']) {
      case 'session.start': {
        if (start) return channel.sendError('tts.invalid_request', 'session.start was already sent');
        try {
          const problem = startFrameError(frame);
          if (problem) throw problem;
          const { type: _type, transport, ...fields } = frame as Record<string, unknown> & { transport?: 'json' | 'binary' };
          const plan = planSynthesis({ ...(fields as Omit<SynthesisRequestBody, 'text'>), text: '.' }, false);
          if (!STREAMABLE_FORMATS.includes(plan.format.id)) {
            throw new ApiError('tts.unsupported_format', `${plan.format.id} cannot be streamed frame by frame; use ${STREAMABLE_FORMATS.join(', ')}`);
          }
          if (!sandbox && !context.services.engines.live.tts)
            throw new ApiError('tts.unavailable', 'no speech synthesis engine is running on this deployment; sandbox keys (sv_test_…) work');
          const lease = await context.services.meter.lease(context.principal, 'tts', 'tts', context.requestId);
          const session = await SynthesisSession.open(plan, (seconds) => lease.drawTo(seconds)).catch((error: unknown) => {
            lease.release();
            throw error;
          });
          if (channel.closed) {
            lease.release();
            return session.abandon();
          }
          budget = lease;
          start = {
            fields: fields as Omit<SynthesisRequestBody, 'text'>,
            plan,
            binary: transport === 'binary',
            framer: new Framer(frameBytesOf(plan)),
            session,
          };
          channel.send({
            type: 'session.ready',
            request_id: context.requestId,
            voice: plan.voice,
            language: plan.language,
            dialect: plan.dialect,
            encoding: plan.format.id,
            sample_rate_hz: plan.sampleRateHz,
            frame_bytes: frameBytesOf(plan),
          });
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          channel.sendError(error.code, error.detail ?? error.message, error.httpStatus === 429 || error.httpStatus === 503 ? { close: 1008 } : {});
        }
        return;
      }
      case 'text.append': {
        if (!start) return channel.sendError('tts.invalid_request', 'send session.start before text');
        const text = frame['text'];
        if (typeof text !== 'string') return channel.sendError('tts.invalid_request', 'text.append needs text: a string');
        if (text.length > LIMITS.ttsMaxTextCharacters)
          return channel.sendError('tts.text_too_long', `one text.append takes at most ${LIMITS.ttsMaxTextCharacters} characters`);
        if (queuedCharacters + segmenter.pendingCharacters + text.length > MAX_PENDING_CHARACTERS) {
          return channel.sendError(
            'tts.capacity',
            `more than ${MAX_PENDING_CHARACTERS} characters wait to be spoken; wait for segment.done frames before sending more`,
          );
        }
        return enqueue(segmenter.append(text));
      }
      case 'text.flush':
        if (!start) return channel.sendError('tts.invalid_request', 'send session.start before text.flush');
        return enqueue(segmenter.flush());
      case 'session.end':
        if (!start) return channel.sendError('tts.invalid_request', 'send session.start before session.end');
        ending = true;
        channel.stopIdleTimer();
        enqueue(segmenter.flush());
        void complete();
        return;
      default:
        return channel.sendError(
          'tts.invalid_request',
          `unknown frame type ${JSON.stringify(frame['type'])}; expected session.start, text.append, text.flush or session.end`,
        );
    }
  });
}
