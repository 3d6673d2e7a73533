/**
 * A key in a menu: the caller waits until the menu prompt (eSpeak NG) has played, presses a key
 * as RFC 4733 events, and the next prompt's first packet is timed from the first event packet
 * sent. Meanwhile other calls on the same gateway hear the synthetic prompt loop, so the key is
 * measured on a gateway that is talking, not an idle one.
 */
import { Caller } from './caller.js';
import { sleep, summary, until, type Summary } from './common.js';
import type { Gateway } from './gateway-process.js';

/** The key figures: key → first packet of the next prompt, and presses without a prompt after. */
export interface MenuKeyFigures {
  readonly keyToPrompt: Summary;
  readonly failed: number;
  /** Calls talking on the gateway meanwhile. */
  readonly background: number;
}

/** Quiet that means a prompt has played out (the pacer sends nothing between prompts). */
const QUIET_MS = 300;

/** Packets of the shortest reply ("You chose sales.", about a second at 50 packets a second), at least. */
const REPLY_PACKETS = 30;

/** Waits until at least `count` packets have come and then `QUIET_MS` passed without one. */
async function played(caller: Caller, count: number): Promise<void> {
  await until(() => caller.received.length >= count && performance.now() - caller.received[caller.received.length - 1]!.at > QUIET_MS, 20_000, 'a prompt');
}

/** `rounds` key presses on the `menu` route, with `background` calls on the `load` route. */
export async function benchMenuKeys(gateway: Gateway, rounds: number, background: number): Promise<MenuKeyFigures> {
  const talking: Caller[] = [];
  const keyToPromptMs: number[] = [];
  let failed = 0;
  try {
    for (let n = 0; n < background; n++) talking.push(await Caller.dial(gateway.sipPort, 'load', `calls-bench-keys-load-${process.pid}-${n}`));
    const caller = await Caller.dial(gateway.sipPort, 'menu', `calls-bench-keys-${process.pid}`);
    try {
      await played(caller, 1);
      // The reply and the menu again follow each other without a pause: a round waits for both.
      const menuPackets = caller.received.length;
      for (let round = 0; round < rounds; round++) {
        const before = caller.received.length;
        // The key falls at a different point of the gateway's 20 ms tick each round.
        await sleep(Math.random() * 20);
        const sent = await caller.pressKey(round % 2 === 0 ? '1' : '2');
        try {
          await until(() => caller.received.length > before, 5000, 'the reply');
          keyToPromptMs.push(caller.received[before]!.at - sent);
          await played(caller, before + REPLY_PACKETS + menuPackets);
        } catch {
          failed += 1;
        }
      }
    } finally {
      await caller.close();
    }
  } finally {
    await Promise.all(talking.map((call) => call.close()));
  }
  return { keyToPrompt: summary(keyToPromptMs), failed, background };
}
