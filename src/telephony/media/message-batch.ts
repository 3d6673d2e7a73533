/**
 * Messages to another thread, sent as one array per turn of the event loop: a tick of the
 * pacer makes an audio frame for every call, and one `postMessage` for all of them costs far
 * less than one each (a structured clone and a wake-up of the other thread per message).
 */

/** Where a batch goes: a `Worker` or the worker's `parentPort`. */
export interface BatchTarget<T> {
  postMessage(batch: T[]): void;
}

/**
 * Collects messages and posts them together once the current task's synchronous work is done.
 * A batch with an urgent message rings the other thread (`ring`) once it has been posted.
 */
export class MessageBatch<T> {
  private pending: T[] = [];
  private scheduled = false;
  private urgent = false;

  constructor(
    private readonly target: BatchTarget<T>,
    private readonly ring?: () => void,
  ) {}

  /** Queues `message`; the batch goes out in a microtask. `urgent`: the batch rings the other thread. */
  send(message: T, urgent = false): void {
    this.pending.push(message);
    if (urgent) this.urgent = true;
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Posts what is queued now. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    const urgent = this.urgent;
    this.pending = [];
    this.urgent = false;
    this.target.postMessage(batch);
    if (urgent) this.ring?.();
  }
}
