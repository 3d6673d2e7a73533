/**
 * A webhook bot's turn, timed from this process (one clock for the caller and the bot): the
 * caller ends its turn with a key (RFC 4733), the gateway POSTs the turn to a bot on loopback,
 * the bot answers with a prompt and another listen, and the prompt's first packet comes back.
 * Measured: key sent → the bot's request received, and the bot's answer sent → the first reply
 * packet received; both are the gateway's share. The bot thinks for a random 0 to
 * `answerDelayMs` before it answers, as a real one takes its own time: an answer that always
 * came at the same moment after the caller's key would always land at the same point of the
 * media thread's 5 ms pacer slots, and the figure would tell of that point, not of the gateway.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Caller } from './caller.js';
import { sleep, summary, until, type Summary } from './common.js';
import type { Gateway } from './gateway-process.js';

/** The webhook figures. */
export interface WebhookTurnFigures {
  readonly keyToRequest: Summary;
  readonly answerToPacket: Summary;
  readonly failed: number;
}

/** Quiet that means a prompt has played out. */
const QUIET_MS = 300;

/** A route whose one step is a webhook bot at `url` (eSpeak NG for its prompts). */
export const webhookDialplan = (url: string): string => `name: calls-bench-webhook
routes:
  - number: "bot"
    engines: live
    language: en
    voice: jonas
    steps:
      - answer: {}
      - webhook: { url: "${url}", timeout_ms: 5000 }
`;

/** A bot that answers every request after a random 0 to `answerDelayMs`: a short prompt, then a listen for one key. */
export async function startBenchBot(answerDelayMs = 0): Promise<{ url: string; requests: number[]; answers: number[]; server: Server }> {
  const requests: number[] = [];
  const answers: number[] = [];
  const listen = { listen: { speech: false, dtmf: true, timeout_ms: 20000, max_ms: 30000 } };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests.push(performance.now());
      const body = JSON.stringify({ actions: [{ say: { text: 'You pressed a key.' } }, listen] });
      setTimeout(() => {
        answers.push(performance.now());
        response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
      }, Math.random() * answerDelayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/turn`, requests, answers, server };
}

/** `rounds` turns on the gateway's `bot` route against `bot`. */
export async function benchWebhookTurns(gateway: Gateway, bot: Awaited<ReturnType<typeof startBenchBot>>, rounds: number): Promise<WebhookTurnFigures> {
  const keyToRequest: number[] = [];
  const answerToPacket: number[] = [];
  let failed = 0;
  const caller = await Caller.dial(gateway.sipPort, 'bot', `calls-bench-webhook-${process.pid}`);
  const played = (count: number) =>
    until(() => caller.received.length >= count && performance.now() - caller.received[caller.received.length - 1]!.at > QUIET_MS, 20_000, 'a prompt');
  try {
    // The start: the bot's first prompt plays, then its listen waits.
    await played(1);
    for (let round = 0; round < rounds; round++) {
      const before = caller.received.length;
      const requestsBefore = bot.requests.length;
      await sleep(Math.random() * 20);
      const sent = await caller.pressKey('1');
      try {
        await until(() => bot.requests.length > requestsBefore && caller.received.length > before, 5000, 'the reply');
        keyToRequest.push(bot.requests[requestsBefore]! - sent);
        answerToPacket.push(caller.received[before]!.at - bot.answers[requestsBefore]!);
        await played(before + 20);
      } catch {
        failed += 1;
      }
    }
  } finally {
    await caller.close();
  }
  return { keyToRequest: summary(keyToRequest), answerToPacket: summary(answerToPacket), failed };
}
