/**
 * The two halves of a turn on a call, on the same sessions as the HTTP and WebSocket APIs:
 * a prompt (`say`: a synthesis session streamed into the media session's pacer, stopped within
 * a frame when the caller barges in) and a listen (a recognition session fed with the caller's
 * audio, ended by a final transcript, keys, silence or the time limit).
 */
import type { SttEngine, TtsEngine } from '../../../engine/types.js';
import type { EngineRegistry } from '../../../engine/registry.js';
import { planSynthesis } from '../../speech/synthesis-request.js';
import { SynthesisSession } from '../../speech/synthesis-service.js';
import { RecognitionSession } from '../../speech/recognition-session.js';
import { RecognitionCapacityError } from '../../../engine/stt/capacity.js';
import type { MediaChannel, PromptPlayout } from '../media/media-channel.js';
import { DIALPLAN_DEFAULTS } from '../../dialplan/dialplan-defaults.js';

/** Which engines a route uses: the live ones, or the synthetic ones (load tests, sandboxes). */
export type RouteEngines = 'live' | 'synthetic';

/** How a prompt ended. */
export interface PromptOutcome {
  /** The caller spoke or pressed a key during the prompt (barge-in). */
  readonly interrupted: boolean;
  /** Seconds of the prompt that went out before it ended or was stopped. */
  readonly playedSeconds: number;
  /** Seconds of audio the synthesis made (all of it unless interrupted). */
  readonly synthesisedSeconds: number;
  /** When the prompt's first packet went out and the caller was last heard (null: the call's media ended first). */
  readonly playout: PromptPlayout | null;
}

export interface PromptRequest {
  readonly text: string;
  readonly voice: string;
  readonly language: string;
  readonly dialect?: string;
  readonly bargeIn: boolean;
}

/**
 * Speaks a prompt into the call. With barge-in, the caller's speech start or a key aborts the
 * synthesis, and the media thread drops every queued frame (the pacer sends nothing more of it).
 * @throws ApiError when the text or voice is refused (a dialplan mistake the loader could not see)
 */
export async function speakPrompt(
  media: MediaChannel,
  engines: EngineRegistry,
  choice: RouteEngines,
  request: PromptRequest,
  callSignal: AbortSignal,
): Promise<PromptOutcome> {
  const plan = planSynthesis(
    {
      text: request.text,
      voice: request.voice,
      language: request.language,
      ...(request.dialect ? { dialect: request.dialect } : {}),
      model: 'swift',
      format: 'pcm16',
      sample_rate_hz: media.playbackRateHz,
    },
    false,
  );
  const engine: TtsEngine | null = choice === 'synthetic' ? engines.sandbox.tts : engines.ttsFor('swift', plan.voice, plan.speech.document);
  if (!engine) throw new Error('no live synthesis engine is running (SPRACHROHR_TTS_ENGINE=none); route the call to synthetic engines or start one');
  const controller = new AbortController();
  const abort = () => controller.abort();
  callSignal.addEventListener('abort', abort, { once: true });
  let interrupted = false;
  const interrupt = (): void => {
    if (interrupted || !request.bargeIn) return;
    interrupted = true;
    controller.abort();
    media.stopPlayback();
  };
  media.on('speech-start', interrupt);
  media.on('dtmf', interrupt);
  media.startPrompt(request.bargeIn);
  const session = await SynthesisSession.open(plan);
  try {
    try {
      for await (const output of session.speak({ engine, dialect: engines.dialect }, plan, controller.signal)) {
        if (output.type !== 'audio' || interrupted) continue;
        media.play(pcmOf(output.bytes));
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    if (!interrupted && !callSignal.aborted) {
      for (const bytes of session.finish()) media.play(pcmOf(bytes));
      media.endPrompt();
    }
    const playout = await playedOut(media, callSignal);
    return { interrupted, playedSeconds: playout?.playedSeconds ?? 0, synthesisedSeconds: session.durationSeconds, playout };
  } finally {
    session.abandon();
    media.off('speech-start', interrupt);
    media.off('dtmf', interrupt);
    callSignal.removeEventListener('abort', abort);
  }
}

/** The prompt's playout report once it played out or was stopped; null when the call ends first. */
function playedOut(media: MediaChannel, signal: AbortSignal): Promise<PromptPlayout | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const ended = (): void => resolve(null);
    signal.addEventListener('abort', ended, { once: true });
    void media.playedOut().then((playout) => {
      signal.removeEventListener('abort', ended);
      resolve(playout);
    });
  });
}

/** Little-endian PCM16 bytes as samples: one copy into aligned memory (the bytes may not be aligned). */
function pcmOf(bytes: Buffer): Int16Array {
  const copy = new Uint8Array(bytes.length & ~1);
  copy.set(bytes.subarray(0, copy.length));
  return new Int16Array(copy.buffer);
}

/** What a listen step heard. */
export interface ListenOutcome {
  /** The final transcript, or '' when nothing was understood. */
  readonly heard: string;
  readonly digits: string;
  /** `busy`: every recogniser was taken, and the step did not take keys either. */
  readonly reason: 'speech' | 'digits' | 'timeout' | 'max' | 'ended' | 'busy';
  /** Speech was asked for but no recogniser was free (the step listened for keys only, if at all). */
  readonly recogniserBusy: boolean;
  /** Seconds of caller audio the recogniser heard. */
  readonly audioSeconds: number;
}

export interface ListenRequest {
  readonly speech: boolean;
  readonly dtmf: boolean;
  readonly language: string;
  readonly vocabulary: readonly string[];
  readonly timeoutMs: number;
  readonly maxMs: number;
  readonly maxDigits: number;
  /** Silence that ends the caller's turn; {@link LISTEN_END_SILENCE_MS} when absent. */
  readonly endSilenceMs?: number;
  /** Caller audio from just before the step (a barge-in's first words), fed first. */
  readonly preroll: readonly Int16Array[];
}

/**
 * The silence that ends a caller's turn unless the listen step sets its own (the dialplan
 * default; why 240 ms: `DIALPLAN_DEFAULTS.listen.end_silence_ms`).
 */
export const LISTEN_END_SILENCE_MS: number = DIALPLAN_DEFAULTS.listen.end_silence_ms;

/**
 * Listens until the caller has said something (a final transcript), pressed enough keys, said
 * nothing for `timeoutMs`, or `maxMs` passed. When every recogniser is busy the call goes on:
 * the step listens for keys only, or (taking no keys) ends at once as `busy`.
 */
export async function listenForCaller(
  media: MediaChannel,
  engines: EngineRegistry,
  choice: RouteEngines,
  request: ListenRequest,
  callSignal: AbortSignal,
): Promise<ListenOutcome> {
  const engine: SttEngine | null = !request.speech ? null : choice === 'synthetic' ? engines.sandbox.sttStream : engines.live.stt.engineFor(request.language);
  if (request.speech && !engine) throw new Error(`no recogniser for ${request.language} is installed; see sprachrohr models`);
  const controller = new AbortController();
  const stopAll = () => controller.abort();
  callSignal.addEventListener('abort', stopAll, { once: true });
  let session: RecognitionSession | null = null;
  let recogniserBusy = false;
  try {
    session = engine
      ? new RecognitionSession(
          [{ language: request.language, engine }],
          request.vocabulary,
          media.audioRateHz,
          controller.signal,
          request.endSilenceMs ?? LISTEN_END_SILENCE_MS,
        )
      : null;
  } catch (error) {
    if (!(error instanceof RecognitionCapacityError)) throw error;
    recogniserBusy = true;
  }
  if (recogniserBusy && !request.dtmf) {
    callSignal.removeEventListener('abort', stopAll);
    return { heard: '', digits: '', reason: 'busy', audioSeconds: 0, recogniserBusy };
  }
  let digits = '';
  let heardSpeech = false;
  return await new Promise<ListenOutcome>((resolve) => {
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (heard: string, reason: ListenOutcome['reason']): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      media.off('speech-start', onSpeech);
      callSignal.removeEventListener('abort', onEnded);
      const audioSeconds = session?.audioSeconds ?? 0;
      session?.close();
      controller.abort();
      resolve({ heard, digits, reason, audioSeconds, recogniserBusy });
    };
    const onAudio = (pcm: Int16Array): void => {
      if (!settled && session) session.write(pcm);
    };
    const onKey = (key: string): void => {
      if (!request.dtmf) return;
      digits += key;
      if (digits.length >= request.maxDigits) finish('', 'digits');
    };
    const onSpeech = (): void => {
      heardSpeech = true;
    };
    const onEnded = (): void => finish('', 'ended');
    if (session) for (const pcm of request.preroll) session.write(pcm);
    media.on('audio', onAudio);
    media.on('dtmf', onKey);
    media.on('speech-start', onSpeech);
    callSignal.addEventListener('abort', onEnded, { once: true });
    timers.push(setTimeout(() => (heardSpeech ? undefined : finish('', 'timeout')), request.timeoutMs));
    timers.push(
      setTimeout(() => {
        // Time is up: what was said so far becomes the final.
        if (session && heardSpeech) session.end();
        else finish('', 'max');
      }, request.maxMs),
    );
    void (async () => {
      if (!session) return;
      try {
        for await (const event of session) {
          if (event.type === 'final' && event.text.trim() !== '') return finish(event.text.trim(), 'speech');
        }
        finish('', heardSpeech ? 'max' : 'timeout');
      } catch {
        finish('', 'ended');
      }
    })();
  });
}
