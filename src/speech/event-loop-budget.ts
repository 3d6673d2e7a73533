/**
 * Longest stretch of synchronous work before a loop hands the event loop a turn. With 4 ms the
 * longest stall under 20 syntheses was 15–23 ms (a garbage collection landing on a full
 * budget); 1.5 ms, with the garbage collector on one thread (`--single-threaded-gc`), kept it
 * at 6–10 ms at the same throughput.
 */
const BUDGET_MS = 1.5;
/** When the event loop last got a turn, as far as these loops can tell. */
let lastTurn = performance.now();
/** Loops waiting to continue; one continues per turn of the event loop. */
const waiting: Array<() => void> = [];
let pumping = false;

function releaseOne(): void {
  const next = waiting.shift();
  if (!next) {
    pumping = false;
    return;
  }
  lastTurn = performance.now();
  next();
  // The next waiter continues on the next turn, after timers and I/O have run.
  setImmediate(releaseOne);
}

/**
 * Lets long loops give the event loop a turn. Async code that only awaits resolved promises
 * (engines that yield without real I/O, chains of encoders, many requests started in one tick)
 * runs as one block of microtasks; calling `breathe()` after each step yields once the block
 * has run longer than the budget. Waiting loops continue one per turn of the event loop: were
 * they all released in the same turn, twenty requests would each take their budget back to
 * back (the stalls: docs/performance.md, "Measurements behind the code's choices").
 */
export async function breathe(): Promise<void> {
  if (performance.now() - lastTurn < BUDGET_MS) return;
  await new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!pumping) {
      pumping = true;
      setImmediate(releaseOne);
    }
  });
}
