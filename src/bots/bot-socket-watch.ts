/**
 * What happens to a `stream` bot's socket, told the same way to both bridges: a message, the
 * bot closing it normally (1000, 1001, or no code), the bot failing (any other close, an
 * error), or the call ending under it.
 */
import type WebSocket from 'ws';
import { closedNormally } from './stream-connection.js';

/** What a bridge does on each. */
export interface BotSocketHandlers {
  message(data: WebSocket.RawData, isBinary: boolean): void;
  /** The bot is done: it closed the socket normally. */
  closed(): void;
  /** The bot failed: why, for the log and `{{bot_error}}`. */
  failed(reason: string): void;
  /** The call ended (the caller hung up, or a transfer took it). */
  callEnded(): void;
}

/** Starts telling `handlers`; returns what stops it. The call having ended already is told at once. */
export function watchBotSocket(socket: WebSocket, signal: AbortSignal, handlers: BotSocketHandlers): () => void {
  const onClose = (code: number, reason: Buffer): void => {
    if (closedNormally(code)) return handlers.closed();
    const text = reason.length > 0 ? ` ${reason.toString('utf8').slice(0, 100)}` : '';
    handlers.failed(`the bot closed the connection (${code}${text})`);
  };
  const onError = (error: Error): void => handlers.failed(`the connection to the bot failed (${error.message})`);
  const onCallEnded = (): void => handlers.callEnded();
  const stop = (): void => {
    socket.off('message', handlers.message);
    socket.off('close', onClose);
    socket.off('error', onError);
    signal.removeEventListener('abort', onCallEnded);
  };
  if (signal.aborted) {
    queueMicrotask(onCallEnded);
    return stop;
  }
  socket.on('message', handlers.message);
  socket.on('close', onClose);
  socket.on('error', onError);
  signal.addEventListener('abort', onCallEnded, { once: true });
  return stop;
}
