/**
 * One realtime socket as the protocols see it: JSON frames and binary frames out with a bound
 * on what may wait in the socket, client frames in (one at a time, in order), error frames in
 * the family's shape, an idle timeout, a heartbeat, and an abort signal for everything the
 * session started. Closing the socket, from either side, ends all of it.
 */
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type { Principal } from '../auth/authenticate.js';
import { ERROR_TABLE, type ErrorCode, type ErrorFamily } from '../api/errors.js';
import type { AppServices } from '../api/services.js';
import type { KeyWatch } from './key-watch.js';

/** What a protocol handler needs besides its socket. */
export interface RealtimeContext {
  readonly principal: Principal;
  readonly requestId: string;
  readonly services: AppServices;
  /** Ends the session when its key is revoked or expires. */
  readonly keyWatch: KeyWatch;
  readonly logger: Logger;
  /**
   * The TCP socket under the WebSocket, when the route has it: frames sent in one turn of the
   * event loop are corked into one write (one system call instead of one per 20 ms frame).
   */
  readonly transport?: { cork(): void; uncork(): void };
}

/** Bytes that may wait in the socket before a sender waits (a slow reader). */
export const HIGH_WATER_BYTES = 1024 * 1024;
/** Unread bytes at which a session whose control frames pile up is closed (it does not read). */
export const MAX_UNREAD_BYTES = 4 * HIGH_WATER_BYTES;
/** How long a sender waits for a slow reader before the session is closed. */
export const SLOW_READER_TIMEOUT_MS = 10_000;
/**
 * How long a session that is being cut off (a reader too slow, a key no longer valid) gets to
 * answer the close frame before its connection is dropped: `ws` would otherwise wait 30 s for
 * an answer that a client which does not read never sends.
 */
export const CUT_OFF_GRACE_MS = 500;

/** What happens to a session's socket. */
export class FrameChannel {
  private readonly controller = new AbortController();
  private readonly closeHandlers: Array<() => void> = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private resumeTimer: NodeJS.Timeout | null = null;
  private readonly heartbeat: NodeJS.Timeout;
  private alive = true;
  private readonly unwatchKey: () => void;
  private corked = false;
  /** Client frames are handled one after another, even when a handler waits. */
  private handling: Promise<void> = Promise.resolve();

  constructor(
    private readonly socket: WebSocket,
    private readonly context: RealtimeContext,
    private readonly family: ErrorFamily,
  ) {
    socket.on('close', () => this.finish());
    socket.on('pong', () => (this.alive = true));
    this.heartbeat = setInterval(() => {
      if (!this.alive) {
        socket.terminate();
        return;
      }
      this.alive = false;
      socket.ping();
    }, context.services.config.realtimeHeartbeatMs);
    this.resetIdleTimer();
    this.unwatchKey = context.keyWatch.watch(context.principal, family, (refusal) => {
      this.context.logger.info({ requestId: context.requestId, code: refusal.code }, 'realtime session ended: its key may no longer act');
      this.sendError(refusal.code, refusal.detail ?? refusal.message, { close: 1008, cutOff: true });
    });
  }

  /** Aborted when the socket closes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  /** Handles client frames in order; a handler's failure closes the session with an internal error. */
  onFrame(handler: (data: Uint8Array, isBinary: boolean) => void | Promise<void>): void {
    this.socket.on('message', (raw: RawData, isBinary: boolean) => {
      this.resetIdleTimer();
      const data = Array.isArray(raw) ? Buffer.concat(raw) : raw instanceof ArrayBuffer ? new Uint8Array(raw) : raw;
      this.handling = this.handling.then(async () => {
        if (this.closed) return;
        try {
          await handler(data, isBinary);
        } catch (error) {
          this.context.logger.error({ err: error, requestId: this.context.requestId }, 'realtime frame failed');
          this.sendError(`${this.family}.internal_error` as ErrorCode, 'the frame could not be handled', { close: 1011 });
        }
      });
    });
  }

  /**
   * Sends a JSON frame now (control frames are small and never wait). A client that leaves
   * more than {@link MAX_UNREAD_BYTES} unread is cut off rather than buffered for.
   */
  send(frame: Record<string, unknown>): void {
    if (this.closed) return;
    if (this.socket.bufferedAmount > MAX_UNREAD_BYTES) {
      this.context.logger.warn({ requestId: this.context.requestId, unread: this.socket.bufferedAmount }, 'realtime client does not read; session closed');
      this.socket.terminate();
      this.finish();
      return;
    }
    this.write(JSON.stringify(frame));
  }

  /**
   * Hands a frame to the socket. The transport stays corked until the current tick's frames
   * are all written: a synthesis chunk's five frames leave in one write.
   */
  private write(data: string | Uint8Array): void {
    const transport = this.context.transport;
    if (transport && !this.corked) {
      this.corked = true;
      transport.cork();
      process.nextTick(() => {
        this.corked = false;
        transport.uncork();
      });
    }
    this.socket.send(data);
  }

  /**
   * Sends an audio frame once the socket has room; closes the session when a reader stays too
   * slow for {@link SLOW_READER_TIMEOUT_MS}.
   * @returns false when the session closed instead
   */
  async sendWhenRoom(frame: Record<string, unknown> | Uint8Array): Promise<boolean> {
    const waitedSince = performance.now();
    while (!this.closed && this.socket.bufferedAmount > HIGH_WATER_BYTES) {
      if (performance.now() - waitedSince > SLOW_READER_TIMEOUT_MS) {
        const code = `${this.family}.timeout` as ErrorCode;
        const detail = `the client read nothing for ${SLOW_READER_TIMEOUT_MS / 1000} s while ${this.socket.bufferedAmount} bytes waited`;
        this.context.logger.warn({ requestId: this.context.requestId, code, detail }, 'realtime client does not read; session cut off');
        this.sendError(code, detail, { close: 1008, cutOff: true });
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (this.closed) return false;
    this.write(frame instanceof Uint8Array ? frame : JSON.stringify(frame));
    return true;
  }

  /**
   * Sends an error frame in the family's shape: nested `{error: {…}}` on tts/stream, flat on
   * stt/stream (spec 6.1, 6.2). With `close`, the socket closes after it with that code; with
   * `cutOff` as well, the connection is dropped if the close is not answered within
   * {@link CUT_OFF_GRACE_MS}.
   */
  sendError(code: ErrorCode, detail: string, options: { close?: number; cutOff?: boolean } = {}): void {
    const body = { code, message: ERROR_TABLE[code].message, detail, request_id: this.context.requestId };
    this.send(this.family === 'tts' ? { type: 'error', error: body } : { type: 'error', ...body });
    if (options.close !== undefined) this.close(options.close, code, options.cutOff ? CUT_OFF_GRACE_MS : undefined);
  }

  /**
   * Stops reading the client's frames for a while (TCP then holds the client back), for a
   * sender that runs ahead of what the session takes.
   */
  pauseReading(ms: number): void {
    if (this.closed || this.resumeTimer) return;
    this.socket.pause();
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      if (!this.closed) this.socket.resume();
    }, ms);
  }

  /** No idle timeout from now on (the session is finishing on its own). */
  stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /**
   * Closes the session with a close frame. `terminateAfterMs`: drop the connection when the
   * client has not answered by then (for clients being cut off; a finished session's last audio
   * may take longer to reach a slow but reading client, so it gets `ws`'s own 30 s).
   */
  close(code: number, reason: string, terminateAfterMs?: number): void {
    if (!this.closed) {
      this.socket.close(code, reason.slice(0, 120));
      if (terminateAfterMs !== undefined) {
        setTimeout(() => {
          if (this.socket.readyState !== this.socket.CLOSED) this.socket.terminate();
        }, terminateAfterMs).unref();
      }
    }
    this.finish();
  }

  private resetIdleTimer(): void {
    this.stopIdleTimer();
    if (this.closed) return;
    const timeoutMs = this.context.services.config.realtimeIdleTimeoutMs;
    this.idleTimer = setTimeout(() => {
      this.sendError(`${this.family}.timeout` as ErrorCode, `no frame for ${timeoutMs / 1000} s; the session is closed`, { close: 1000 });
    }, timeoutMs);
  }

  private finish(): void {
    if (this.closed) return;
    this.controller.abort(new DOMException('the realtime session closed', 'AbortError'));
    this.stopIdleTimer();
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    clearInterval(this.heartbeat);
    this.unwatchKey();
    for (const handler of this.closeHandlers.splice(0)) handler();
  }
}

/**
 * A client's JSON frame as an object with a string `type`, or `null` after sending the error
 * frame that explains what is wrong with it.
 */
export function parseClientFrame(data: Uint8Array, channel: FrameChannel, family: ErrorFamily): Record<string, unknown> | null {
  let frame: unknown;
  try {
    frame = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    channel.sendError(`${family}.invalid_request` as ErrorCode, 'a text frame must be a JSON object with a "type"');
    return null;
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame) || typeof (frame as Record<string, unknown>)['type'] !== 'string') {
    channel.sendError(`${family}.invalid_request` as ErrorCode, 'a text frame must be a JSON object with a string "type"');
    return null;
  }
  return frame as Record<string, unknown>;
}
