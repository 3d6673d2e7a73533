/**
 * A call bridged to a bot that needs no speech engine (`stream` step, `text` mode): the
 * gateway recognises the caller the whole time and sends partial and final transcripts, the
 * start of the caller's speech (barge-in) and keys; the bot sends text (or <speak> markup) to
 * say, `clear`, `transfer` and `hangup`. The messages are in stream-messages.ts.
 *
 * What the bot asks for runs in order: says one after the other, a hangup once what is queued
 * has been said. `clear`, a barge-in and a `transfer` stop what is being said at once and drop
 * the queued says; every say gets its `say.done`, which tells whether the caller heard all of it.
 * A `clear` or `transfer` acts on the says the bot sent before it, read or not yet started: one
 * read together with its say stops that say before it plays.
 */
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { ApiError } from '../api/errors.js';
import type { CallVoice, StreamOutcome, TransferOutcome, TransferRequest } from '../dialplan/steps/step-context.js';
import { confidenceOf, type RecognitionSession } from '../speech/recognition-session.js';
import type { MediaChannel } from '../telephony/media/media-channel.js';
import type { PromptRequest } from '../dialplan/steps/step-context.js';
import { watchBotSocket } from './bot-socket-watch.js';
import { readTextMessage } from './stream-inbound.js';
import type { TextIn, TextOut } from './stream-messages.js';

/** How a say ended. */
export interface SaidPrompt {
  /** The caller spoke over it or pressed a key (barge-in). */
  readonly interrupted: boolean;
  /** Its stop cut it short: the caller did not hear all of it. */
  readonly stopped: boolean;
  readonly playedSeconds: number;
}

/** The call as the bridge sees it. */
export interface TextStreamCall {
  readonly media: MediaChannel;
  /** The recognition of the caller for the whole stream (the caller's audio is written to it here). */
  readonly recognition: RecognitionSession;
  readonly voice: CallVoice;
  readonly call: { readonly id: string; readonly caller: string; readonly called: string; readonly route: string };
  readonly parameters: Readonly<Record<string, string>>;
  readonly variables: Readonly<Record<string, string>>;
  readonly logger: Logger;
  /**
   * Says a prompt; `stop` stops it where it is (clear, a transfer, the stream's end), and how
   * much of it was played comes back all the same. A stop before it started plays nothing.
   */
  speak(prompt: PromptRequest, stop: AbortSignal): Promise<SaidPrompt>;
  transfer(request: TransferRequest): Promise<TransferOutcome>;
  hangup(reason: string): Promise<void>;
}

type Say = Extract<TextIn, { type: 'say' }>;
type Task = Say | Extract<TextIn, { type: 'transfer' }> | Extract<TextIn, { type: 'hangup' }>;

/**
 * The say being said, what clear or a transfer stops it with, and the queued says dropped
 * meanwhile: their say.done follows its own, so that the bot gets them in the order it sent.
 */
interface Speaking {
  readonly stop: AbortController;
  readonly dropped: Say[];
}

/** How long a bridged transfer rings before it counts as not answered (the transfer step's default). */
const TRANSFER_RING_MS = 30_000;

/** Runs the stream until the bot closes the socket, fails, hangs up or transfers, or the caller hangs up. */
export function runTextStream(socket: WebSocket, call: TextStreamCall, signal: AbortSignal): Promise<StreamOutcome> {
  const { media, recognition, logger } = call;
  const startedAt = performance.now();
  const stream = new AbortController();
  const tasks: Task[] = [];
  let working = false;
  let current: Speaking | null = null;
  // During a transfer the caller talks to a person, not to the bot: nothing is recognised.
  let transferring = false;
  let closedByBot = false;
  /** The call ends because the bot asked (its end is not the caller's). */
  let botHungUp = false;

  const send = (message: TextOut): void => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  };

  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: StreamOutcome): void => {
      if (done) return;
      done = true;
      stream.abort();
      media.off('audio', onAudio);
      media.off('dtmf', onKey);
      media.off('speech-start', onSpeech);
      unwatch();
      recognition.close();
      resolve(outcome);
    };
    const end = (reason: 'hangup' | 'transferred' | 'bot_hangup'): void => {
      send({ type: 'session.end', reason });
      socket.close(1000, reason);
    };

    const onAudio = (pcm: Int16Array): void => {
      if (!transferring && !done) recognition.write(pcm);
    };
    const onKey = (digit: string): void => {
      if (!transferring) send({ type: 'dtmf', digit });
    };
    const onSpeech = (): void => {
      if (transferring) return;
      send({ type: 'speech_started', at_ms: Math.round(performance.now() - startedAt) });
    };

    /** Each of `says` was dropped before it was said. */
    const dropped = (says: readonly Say[]): void => {
      for (const task of says) send({ type: 'say.done', id: task.id ?? null, interrupted: true, played_seconds: 0 });
    };

    /** Stops the say being said and drops the queued ones (each gets its say.done, after the one being said). */
    const clear = (): void => {
      const says: Say[] = [];
      for (const task of tasks.splice(0)) {
        if (task.type === 'say') says.push(task);
        else tasks.push(task);
      }
      if (!current) return dropped(says);
      current.dropped.push(...says);
      // The say's own stop, not the media's: a say read with this clear has not started its
      // prompt yet, and a stop of the media now would end only what played before it.
      current.stop.abort();
    };

    const say = async (task: Say): Promise<void> => {
      const spoken: Speaking = { stop: new AbortController(), dropped: [] };
      current = spoken;
      try {
        const voice = task.language === undefined ? call.voice : { language: task.language, voice: call.voice.voice };
        const outcome = await call.speak(
          {
            text: task.text,
            language: voice.language,
            voice: task.voice ?? voice.voice,
            ...((task.dialect ?? voice.dialect) !== undefined ? { dialect: (task.dialect ?? voice.dialect)! } : {}),
            ...(task.dialect_text ? { dialectText: true } : {}),
            bargeIn: task.barge_in ?? true,
          },
          AbortSignal.any([stream.signal, spoken.stop.signal]),
        );
        const interrupted = outcome.interrupted || outcome.stopped;
        send({ type: 'say.done', id: task.id ?? null, interrupted, played_seconds: Math.round(outcome.playedSeconds * 100) / 100 });
        // The caller spoke over it: what the bot meant to say after it no longer fits.
        if (outcome.interrupted) clear();
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        send({ type: 'error', code: 'invalid_say', detail: error.detail ?? error.message });
        send({ type: 'say.done', id: task.id ?? null, interrupted: false, played_seconds: 0 });
      } finally {
        current = null;
        dropped(spoken.dropped);
      }
    };

    /** Runs a transfer; true when the call is over (transferred, or the caller hung up meanwhile). */
    const transfer = async (task: Extract<Task, { type: 'transfer' }>): Promise<boolean> => {
      transferring = true;
      let outcome: TransferOutcome;
      try {
        outcome = await call.transfer({
          target: task.target,
          mode: task.mode ?? 'auto',
          diversion: false,
          headers: [],
          ringTimeoutMs: TRANSFER_RING_MS,
          waiting: 'ringback',
        });
      } finally {
        transferring = false;
      }
      if (outcome.result === 'transferred' || outcome.result === 'bridged') {
        end('transferred');
        finish({ result: 'ended', reason: `transferred to ${task.target}` });
        return true;
      }
      if (signal.aborted) {
        onCallEnded();
        return true;
      }
      send({ type: 'transfer.result', result: outcome.result, status: outcome.status });
      return false;
    };

    /** Works through what the bot asked for, in order. */
    const work = async (): Promise<void> => {
      if (working) return;
      working = true;
      try {
        while (tasks.length > 0 && !done) {
          const task = tasks.shift()!;
          if (task.type === 'say') await say(task);
          else if (task.type === 'transfer') {
            if (await transfer(task)) return;
          } else {
            end('bot_hangup');
            botHungUp = true;
            await call.hangup(task.reason ?? 'the bot hung up');
            return finish({ result: 'ended', reason: 'the bot hung up' });
          }
        }
        if (closedByBot) finish({ result: 'closed', reason: 'the bot closed the connection' });
      } catch (error) {
        // The caller left while an action ran (a transfer whose hang-up or media failed with the
        // call): the call's end, not a failure of the bot.
        if (signal.aborted) return onCallEnded();
        logger.error({ err: error }, 'stream bot action failed');
        fail(`an action of the bot failed (${(error as Error).message})`);
      } finally {
        working = false;
      }
    };

    const onMessage = (data: WebSocket.RawData, isBinary: boolean): void => {
      const read = readTextMessage(data, isBinary);
      if ('problem' in read) {
        logger.warn({ problem: read.problem }, 'bot message refused');
        return send({ type: 'error', code: 'invalid_message', detail: read.problem });
      }
      const message = read.message;
      if (message.type === 'clear') return clear();
      if (message.type === 'transfer') clear();
      tasks.push(message);
      void work();
    };

    /** What the bot asked for before closing is still done, then the dialplan goes on. */
    const closed = (): void => {
      closedByBot = true;
      if (!working) finish({ result: 'closed', reason: 'the bot closed the connection' });
    };
    const fail = (reason: string): void => {
      socket.terminate();
      // The stream's end stops the say being said (the fallback comes next).
      finish({ result: 'failed', reason });
    };
    const onCallEnded = (): void => {
      if (botHungUp) return finish({ result: 'ended', reason: 'the bot hung up' });
      // A REFER that worked hangs the call up before its outcome is back: the transfer, once it
      // has its outcome, tells the bot whether the call was transferred or the caller left.
      if (transferring) return;
      end('hangup');
      finish({ result: 'ended', reason: 'the call ended' });
    };

    const unwatch = watchBotSocket(socket, signal, { message: onMessage, closed, failed: fail, callEnded: onCallEnded });
    if (signal.aborted) return;
    media.on('audio', onAudio);
    media.on('dtmf', onKey);
    media.on('speech-start', onSpeech);
    send({
      type: 'session.start',
      call: call.call,
      language: call.voice.language,
      voice: call.voice.voice,
      dialect: call.voice.dialect ?? null,
      parameters: { ...call.parameters },
      variables: { ...call.variables },
    });
    void (async () => {
      try {
        for await (const event of recognition) {
          if (done || transferring) continue;
          const words = event.words.map(({ w, start, end, conf }) => ({ w, start, end, conf }));
          if (event.type === 'partial') send({ type: 'transcript.partial', text: event.text, lang: event.lang, words });
          else if (event.text.trim() !== '')
            send({ type: 'transcript.final', text: event.text.trim(), lang: event.lang, confidence: confidenceOf(event.words), words });
        }
      } catch (error) {
        // The end of the call aborts the recogniser: that end is told by the call, not a failure.
        if (!done && !signal.aborted) fail(`the recogniser failed (${(error as Error).message})`);
      }
    })();
  });
}
