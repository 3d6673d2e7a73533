import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch of synchronous work before a loop hands the event loop a turn. */
const BUDGET_MS = 4;
/** When some loop last gave the event loop a turn (shared by every request in the process). */
let lastTurn = performance.now();

/**
 * Lets long loops give the event loop a turn. Async code that only awaits resolved promises
 * (engines that yield without real I/O, chains of encoders, many requests started in one
 * tick) runs as one block of microtasks; calling `breathe()` after each step yields once the
 * process has run longer than the budget without a turn, so timers, sockets and calls keep
 * their pace. The clock is shared: twenty requests in one tick do not get four ms each.
 */
export async function breathe(): Promise<void> {
  if (performance.now() - lastTurn < BUDGET_MS) return;
  await nextTurn();
  lastTurn = performance.now();
}
