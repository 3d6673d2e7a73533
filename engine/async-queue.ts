/**
 * A queue between a producer that pushes (a worker's messages, a native callback) and one
 * consumer that awaits items in order. A failure reaches the consumer after the items before it.
 */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private waiting: { resolve: (item: T) => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;

  push(item: T): void {
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve(item);
    } else {
      this.items.push(item);
    }
  }

  fail(error: Error): void {
    this.failure = error;
    if (this.waiting) {
      const { reject } = this.waiting;
      this.waiting = null;
      reject(error);
    }
  }

  /** The next item, waiting for it if needed. */
  next(): Promise<T> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift()!);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }
}
