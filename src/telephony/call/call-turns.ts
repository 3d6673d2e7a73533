/**
 * The two halves of a turn on a call, on the same sessions as the HTTP and WebSocket APIs:
 * a prompt (`say`: a synthesis session streamed into the media session's pacer, stopped within
 * a frame when the caller barges in) and a listen (a recognition session fed with the caller's
 * audio, ended by a final transcript, keys, silence or the time limit).
 */
import type { RecognisedWord, SttEngine, TtsEngine } from '../../../engine/types.js';
import type { EngineRegistry } from '../../../engine/registry.js';
import { planSynthesis } from '../../speech/synthesis-request.js';
import { SpeechAhead, SynthesisSession } from '../../speech/synthesis-service.js';
import { confidenceOf, RecognitionSession } from '../../speech/recognition-session.js';
import { RecognitionCapacityError } from '../../../engine/stt/capacity.js';
import type { MediaChannel, PromptPlayout } from '../media/media-channel.js';
import { DIALPLAN_DEFAULTS } from '../../dialplan/dialplan-defaults.js';
import { takeKeys } from '../../dialplan/key-entry.js';
import type { ListenOutcome, ListenRequest } from '../../dialplan/steps/step-context.js';

/** Which engines a route uses: the live ones, or the synthetic ones (load tests, sandboxes). */
export type RouteEngines = 'live' | 'synthetic';

/** How a prompt ended. */
export interface PromptOutcome {
  /** The caller spoke or pressed a key during the prompt (barge-in). */
  readonly interrupted: boolean;
  /** The stop signal cut it short: the caller did not hear all of it (a stop after it played out does not count). */
  readonly stopped: boolean;
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
  /** Written in the dialect already: pronounced, not rendered. */
  readonly dialectText?: boolean;
  readonly bargeIn: boolean;
}

/**
 * Speaks a prompt into the call. With barge-in, the caller's speech start or a key aborts the
 * synthesis, and the media thread drops every queued frame (the pacer sends nothing more of it).
 * `stop` does the same whenever it aborts, barge-in or not, and the outcome still tells how much
 * was played: a prompt stopped before it started plays nothing, not even what it would have cut
 * of the prompt before it. `callSignal` is the call's end: nothing is waited for then.
 * @throws ApiError when the text or voice is refused (a dialplan mistake the loader could not see)
 */
export async function speakPrompt(
  media: MediaChannel,
  engines: EngineRegistry,
  choice: RouteEngines,
  request: PromptRequest,
  callSignal: AbortSignal,
  stop?: AbortSignal,
): Promise<PromptOutcome> {
  const plan = planSynthesis(
    {
      text: request.text,
      voice: request.voice,
      language: request.language,
      ...(request.dialect ? { dialect: request.dialect } : {}),
      ...(request.dialectText ? { dialect_text: true } : {}),
      model: 'swift',
      format: 'pcm16',
      sample_rate_hz: media.playbackRateHz,
    },
    false,
  );
  const engine: TtsEngine | null = choice === 'synthetic' ? engines.sandbox.tts : engines.ttsFor('swift', plan.voice, plan.speech.document);
  if (!engine) throw new Error('no live synthesis engine is running (SPRACHROHR_TTS_ENGINE=none); route the call to synthetic engines or start one');
  // Stopped before it started (while the caller of this waited for the media, say): it does not
  // start at all, so the stop cannot miss it (a stop sent now would find no prompt of ours to end).
  if (stop?.aborted) return { interrupted: false, stopped: true, playedSeconds: 0, synthesisedSeconds: 0, playout: null };
  const controller = new AbortController();
  const abort = () => controller.abort();
  callSignal.addEventListener('abort', abort, { once: true });
  // The stop cannot come before startPrompt (nothing runs in between): it ends this prompt.
  const halt = (): void => {
    controller.abort();
    media.stopPlayback();
  };
  let interrupted = false;
  const interrupt = (): void => {
    // Stopped already (or the call is over): nothing of it is left for the caller to speak over.
    if (interrupted || !request.bargeIn || controller.signal.aborted) return;
    interrupted = true;
    halt();
  };
  stop?.addEventListener('abort', halt, { once: true });
  media.on('speech-start', interrupt);
  media.on('dtmf', interrupt);
  media.startPrompt(request.bargeIn);
  // The engine starts at once: opening the session may wait for a turn of the event loop, and
  // the reply's first audio should not wait behind it.
  const ahead = new SpeechAhead({ engine, dialect: engines.dialect }, plan, controller.signal);
  let session: SynthesisSession | null = null;
  try {
    session = await SynthesisSession.open(plan);
    try {
      for await (const output of session.speakAhead(ahead)) {
        if (output.type !== 'audio' || controller.signal.aborted) continue;
        media.play(pcmOf(output.bytes));
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    if (!controller.signal.aborted) {
      for (const bytes of session.finish()) media.play(pcmOf(bytes));
      media.endPrompt();
    }
    // Stopped, the media thread reports what went out up to the stop, so this waits for it too.
    const playout = await playedOut(media, callSignal);
    const stopped = (stop?.aborted ?? false) && playout?.complete !== true;
    return { interrupted, stopped, playedSeconds: playout?.playedSeconds ?? 0, synthesisedSeconds: session.durationSeconds, playout };
  } finally {
    // A synthesis that did not run to its end (the session failed to open, or was left) stops.
    controller.abort();
    session?.abandon();
    media.off('speech-start', interrupt);
    media.off('dtmf', interrupt);
    callSignal.removeEventListener('abort', abort);
    stop?.removeEventListener('abort', halt);
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

/** A listen on the phone: the step's request, the audio and keys from before it. */
export interface PhoneListenRequest extends ListenRequest {
  /** Caller audio from just before the step (a barge-in's first words), fed first. */
  readonly preroll: readonly Int16Array[];
  /** Keys pressed since the last listen (type-ahead), taken first. */
  readonly typedAhead: string;
}

/**
 * The silence that ends a caller's turn unless the listen step sets its own (the dialplan
 * default; why 240 ms: `DIALPLAN_DEFAULTS.listen.end_silence_ms`).
 */
export const LISTEN_END_SILENCE_MS: number = DIALPLAN_DEFAULTS.listen.end_silence_ms;

/**
 * Listens until the caller has said something (a final transcript), pressed enough keys or the
 * finishing key, paused between keys for `interDigitTimeoutMs`, said nothing for `timeoutMs`,
 * or `maxMs` passed. Keys typed ahead count first; those a complete entry leaves over are
 * returned in `rest`. When every recogniser is busy the call goes on: the step listens for keys
 * only, or (taking no keys) ends at once as `busy`.
 */
export async function listenForCaller(
  media: MediaChannel,
  engines: EngineRegistry,
  choice: RouteEngines,
  request: PhoneListenRequest,
  callSignal: AbortSignal,
): Promise<ListenOutcome & { readonly rest: string }> {
  const ahead = request.dtmf ? takeKeys(request.typedAhead, request.maxDigits, request.finishOnKey) : null;
  if (ahead?.complete)
    return { heard: '', digits: ahead.digits, reason: ahead.finished ? 'finished' : 'digits', audioSeconds: 0, recogniserBusy: false, rest: ahead.rest };
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
    return { heard: '', digits: '', reason: 'busy', audioSeconds: 0, recogniserBusy, rest: request.typedAhead };
  }
  let digits = ahead?.digits ?? '';
  let heardSpeech = false;
  return await new Promise((resolve) => {
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let words: readonly RecognisedWord[] = [];
    const finish = (heard: string, reason: ListenOutcome['reason']): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      media.off('speech-start', onSpeech);
      callSignal.removeEventListener('abort', onEnded);
      callSignal.removeEventListener('abort', stopAll);
      const audioSeconds = session?.audioSeconds ?? 0;
      session?.close();
      controller.abort();
      const timed = heard === '' ? [] : words.map((word) => ({ word: word.w, start: word.start, end: word.end, confidence: word.conf }));
      resolve({ heard, digits, reason, audioSeconds, recogniserBusy, rest: '', words: timed, confidence: timed.length > 0 ? confidenceOf(words) : null });
    };
    let interDigit: NodeJS.Timeout | null = null;
    const onAudio = (pcm: Int16Array): void => {
      if (!settled && session) session.write(pcm);
    };
    const onKey = (key: string): void => {
      if (!request.dtmf || settled) return;
      if (key === request.finishOnKey) return finish('', 'finished');
      digits += key;
      if (digits.length >= request.maxDigits) return finish('', 'digits');
      if (request.interDigitTimeoutMs !== undefined) {
        if (interDigit) clearTimeout(interDigit);
        interDigit = setTimeout(() => finish('', 'digits'), request.interDigitTimeoutMs);
        timers.push(interDigit);
      }
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
    if (digits !== '' && request.interDigitTimeoutMs !== undefined) {
      interDigit = setTimeout(() => finish('', 'digits'), request.interDigitTimeoutMs);
      timers.push(interDigit);
    }
    // A first key or speech stops the no-input timeout; keys then have the inter-digit one.
    timers.push(
      setTimeout(() => (heardSpeech || (digits !== '' && request.interDigitTimeoutMs !== undefined) ? undefined : finish('', 'timeout')), request.timeoutMs),
    );
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
          if (event.type === 'final' && event.text.trim() !== '') {
            words = event.words;
            return finish(event.text.trim(), 'speech');
          }
        }
        finish('', heardSpeech ? 'max' : 'timeout');
      } catch {
        finish('', 'ended');
      }
    })();
  });
}
