/**
 * A WebSocket client for the realtime tests: connects (or reports the refused handshake),
 * collects JSON frames in order and lets a test wait for the next one of a type.
 */
import WebSocket from 'ws';

/** A refused handshake: its status, headers and body. */
export interface RefusedUpgrade {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** An open connection and what came over it. */
export class TestSocket {
  readonly frames: Array<Record<string, unknown>> = [];
  readonly binary: Buffer[] = [];
  private waiters: Array<() => void> = [];
  closeCode: number | null = null;
  readonly closed: Promise<number>;

  constructor(
    readonly socket: WebSocket,
    readonly upgradeHeaders: Record<string, string | string[] | undefined>,
  ) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.binary.push(Buffer.from(data));
      else this.frames.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        this.wake();
        resolve(code);
      }),
    );
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Sends a JSON frame. */
  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The first frame of `type` after `from` (an index into `frames`), waiting up to `timeoutMs`. */
  async next(type: string, timeoutMs = 10_000, from = 0): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find((frame) => frame['type'] === type);
      if (found) return found;
      if (this.closeCode !== null) throw new Error(`closed (${this.closeCode}) before a ${type} frame; got ${JSON.stringify(this.frames).slice(0, 600)}`);
      if (Date.now() > deadline) throw new Error(`no ${type} frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}

/** Opens a WebSocket; resolves with the socket or with the refused handshake. */
export function connect(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<TestSocket | RefusedUpgrade> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
    let upgradeHeaders: Record<string, string | string[] | undefined> = {};
    socket.once('upgrade', (response) => (upgradeHeaders = response.headers));
    socket.once('open', () => resolve(new TestSocket(socket, upgradeHeaders)));
    socket.once('unexpected-response', (request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        // ws leaves the refused request to its listener: it is ended here.
        request.destroy();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
      });
    });
    socket.once('error', (error) => reject(error));
  });
}

/** Narrows a connection result to an open socket. */
export function opened(result: TestSocket | RefusedUpgrade): TestSocket {
  if (!(result instanceof TestSocket)) throw new Error(`the handshake was refused: ${result.status} ${result.body}`);
  return result;
}
