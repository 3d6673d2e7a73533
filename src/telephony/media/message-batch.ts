/**
 * Messages to another thread, sent as one array per turn of the event loop: a tick of the
 * pacer makes an audio frame for every call, and one `postMessage` for all of them costs far
 * less than one each (a structured clone and a wake-up of the other thread per message).
 */

/** Where a batch goes: a `Worker` or the worker's `parentPort`. */
export interface BatchTarget<T> {
  postMessage(batch: T[]): void;
}

/** Collects messages and posts them together once the current task's synchronous work is done. */
export class MessageBatch<T> {
  private pending: T[] = [];
  private scheduled = false;

  constructor(private readonly target: BatchTarget<T>) {}

  /** Queues `message`; the batch goes out in a microtask. */
  send(message: T): void {
    this.pending.push(message);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Posts what is queued now. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.target.postMessage(batch);
  }
}
