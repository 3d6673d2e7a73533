/**
 * Media direction (RFC 3264 §5.1, §6.1) as a pair of flags, so that reversing a direction for
 * the other side, narrowing it by what we want, and folding in a hold all stay one-liners.
 */

/** Media direction of a stream, always from the point of view of the side that wrote it. */
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** Every direction, for validating input. */
export const DIRECTIONS: readonly Direction[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

/** Whether the side may send, and whether it wants to receive. */
export function flags(direction: Direction): { send: boolean; recv: boolean } {
  return { send: direction === 'sendrecv' || direction === 'sendonly', recv: direction === 'sendrecv' || direction === 'recvonly' };
}

/** The direction with the given flags. */
export function fromFlags(send: boolean, recv: boolean): Direction {
  if (send && recv) return 'sendrecv';
  if (send) return 'sendonly';
  if (recv) return 'recvonly';
  return 'inactive';
}

/**
 * Our direction when the far end declared `theirs` and we would like `ours`: we send only what
 * it receives and receive only what it sends, so the answer to sendonly is recvonly and so on
 * (RFC 3264 §6.1). Narrowing by `ours` keeps a call we hold held when the far end re-offers
 * sendrecv.
 */
export function complement(theirs: Direction, ours: Direction = 'sendrecv'): Direction {
  const them = flags(theirs);
  const us = flags(ours);
  return fromFlags(us.send && them.recv, us.recv && them.send);
}

/** The direction with receiving taken away: what a connection address of 0.0.0.0 means (RFC 3264 §8.4). */
export function withoutReceiving(direction: Direction): Direction {
  return fromFlags(flags(direction).send, false);
}
