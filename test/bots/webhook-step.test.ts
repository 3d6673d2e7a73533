/**
 * The `webhook` step against a real HTTP bot on loopback (node:http): signed requests with the
 * call, its variables and each turn; the bot's actions run in the dialplan's vocabulary (a menu
 * and a transfer, a listen, a hand-over to another bot); an empty answer gives the call back
 * to the dialplan; a bot that is down, slow, answers an error or nonsense leads to the fallback
 * with the call kept (on_fail) or ended politely; the bot hears when the call ends. Turns are
 * POSTed unless the step says PUT, and one call's turns share one kept-alive connection.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { simulateRoute } from '../helpers/simulate-route.js';

const SECRET = 'bot-secret-for-tests-0123456789abcdef';

/** What the bot received: the method, the parsed body, and whether its signature was right. */
interface Received {
  readonly method: string | undefined;
  readonly body: { event: string; call: Record<string, string>; variables: Record<string, string>; turn?: Record<string, unknown> };
  readonly signed: boolean;
  readonly token: string | undefined;
}

/** A bot on loopback: `answer` decides each reply from what came. */
async function bot(answer: (received: Received, response: ServerResponse) => void): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    request.on('end', () => {
      const timestamp = request.headers['x-speech-webhook-timestamp'];
      const expected = `sha256=${createHmac('sha256', SECRET)
        .update(`${String(timestamp)}.${raw}`)
        .digest('hex')}`;
      const entry = {
        method: request.method,
        body: JSON.parse(raw) as Received['body'],
        signed: request.headers['x-speech-webhook-signature'] === expected,
        token: request.headers['x-bot-token'] as string | undefined,
      };
      received.push(entry);
      answer(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/turn`, received, server };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Waits (2 s at most) until the bot has had `count` requests: the hangup event is not waited for by the call. */
async function arrived(received: Received[], count: number): Promise<void> {
  for (const deadline = Date.now() + 2000; received.length < count && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
}

const json = (response: ServerResponse, body: unknown, delayMs = 0) =>
  setTimeout(() => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  }, delayMs);

const simulate = (steps: string, lines: string[]) => simulateRoute(steps, lines, { webhookSecret: SECRET });

const webhookStep = (url: string, extra = '') =>
  `      - webhook:\n          url: "${url}"\n          headers: { X-Bot-Token: abc }\n          timeout_ms: 1000\n${extra}`;

describe('a webhook bot', () => {
  it('drives a menu and a transfer with signed requests that carry the call and each turn', async () => {
    const { url, received } = await bot((entry, response) => {
      if (entry.body.event === 'start')
        json(response, {
          actions: [{ say: { text: 'Hello from the bot.' } }, { menu: { prompt: 'Press 1 for sales.', options: [{ key: '1', goto: 'sales' }] } }],
        });
      else if (entry.body.event === 'turn') json(response, [{ set: { team: 'sales' } }, { transfer: { to: '+41445550111' } }]);
      else json(response, []);
    });
    const { out, end } = await simulate(webhookStep(url), ['dtmf 1']);
    expect(out).toEqual(['< Hello from the bot.', '< Press one for sales.', '-> transfer +41445550111']);
    expect(end).toBe('ended');
    await arrived(received, 3);
    expect(received.map((entry) => entry.body.event)).toEqual(['start', 'turn', 'hangup']);
    expect(received.every((entry) => entry.signed && entry.token === 'abc' && entry.method === 'POST')).toBe(true);
    expect(received[0]!.body.call).toMatchObject({ caller: 'sip:+41790000000@example.ch', called: '100', language: 'en', route: '100' });
    expect(received[1]!.body.turn).toEqual({ type: 'choice', choice: 'sales', digits: '1', transcript: '' });
    expect(received[2]!.body.variables).toMatchObject({ team: 'sales', transfer: 'transferred' });
  });

  it('hears what the caller says; an answer with no actions gives the call back to the dialplan', async () => {
    const { url, received } = await bot((entry, response) =>
      json(
        response,
        entry.body.event === 'start' ? [{ say: { text: 'What do you need?' } }, { listen: { timeout_ms: 2000 } }, { say: { text: 'never said' } }] : [],
      ),
    );
    const { out } = await simulate(`${webhookStep(url)}      - say: { text: "Back in the dialplan, {{heard}}." }\n`, ['billing please']);
    expect(out).toEqual(['< What do you need?', '< Back in the dialplan, billing please.', '-> hangup']);
    // Typed lines have no timing or confidence; on a call the recogniser's words and confidence come along.
    expect(received[1]!.body.turn).toEqual({ type: 'speech', transcript: 'billing please', confidence: null, words: [] });
  });

  it('hands over to another bot with a webhook action', async () => {
    const second = await bot((entry, response) =>
      json(response, entry.body.event === 'start' ? [{ say: { text: 'Second bot.' } }, { hangup: { reason: 'done' } }] : []),
    );
    const first = await bot((_entry, response) => json(response, [{ say: { text: 'First bot.' } }, { webhook: { url: second.url } }]));
    const { out } = await simulate(webhookStep(first.url), []);
    expect(out).toEqual(['< First bot.', '< Second bot.', '-> hangup (done)']);
    expect(second.received[0]!.signed).toBe(true);
  });

  it('hands the call to a stream bot with a stream action, and hears when that stream ends', async () => {
    const { url, received } = await bot((entry, response) =>
      json(
        response,
        entry.body.event === 'start' ? [{ stream: { url: 'wss://bot.example/media', mode: 'text' } }] : [{ hangup: { reason: 'after the stream' } }],
      ),
    );
    const { out } = await simulate(webhookStep(url), []);
    // A terminal has no call audio to stream: the simulation shows the stream and goes on as if the bot had closed it.
    expect(out).toEqual(['-> stream wss://bot.example/media (text; not simulated: it needs a phone call)', '-> hangup (after the stream)']);
    expect(received[1]!.body.turn).toEqual({ type: 'stream', result: 'closed', error: null });
  });

  it('sends every turn as a PUT when the step says so, the turn being the same signed JSON body', async () => {
    // A bot that routes turns by PUT only: anything else is refused, and the call would get the fallback.
    const { url, received } = await bot((entry, response) => {
      if (entry.method !== 'PUT') return void response.writeHead(405, { Allow: 'PUT' }).end();
      json(response, entry.body.event === 'start' ? [{ say: { text: 'Put through.' } }, { listen: { timeout_ms: 2000 } }] : [{ hangup: { reason: 'done' } }]);
    });
    const { out, vars } = await simulate(webhookStep(url, '          method: PUT\n'), ['hello']);
    expect(out).toEqual(['< Put through.', '-> hangup (done)']);
    expect(vars['bot_error']).toBeUndefined();
    expect(received.map((entry) => [entry.method, entry.body.event, entry.signed])).toEqual([
      ['PUT', 'start', true],
      ['PUT', 'turn', true],
    ]);
    expect(received[1]!.body.turn).toMatchObject({ type: 'speech', transcript: 'hello' });
  });

  it("keeps one connection for all of a call's turns", async () => {
    const { url, received, server } = await bot((entry, response) =>
      json(response, entry.body.event === 'start' || received.length < 4 ? [{ say: { text: 'Go on.' } }, { listen: { timeout_ms: 2000 } }] : []),
    );
    let connections = 0;
    server.on('connection', () => connections++);
    const { out } = await simulate(webhookStep(url), ['one', 'two', 'three']);
    expect(out).toEqual(['< Go on.', '< Go on.', '< Go on.', '-> hangup']);
    // start and three turns, each answered before the next was sent, over the first connection.
    expect(received.map((entry) => entry.body.event)).toEqual(['start', 'turn', 'turn', 'turn']);
    expect(connections).toBe(1);
  });

  it('says the filler while a slow bot thinks, and goes on with its answer', async () => {
    const { url } = await bot((entry, response) => json(response, entry.body.event === 'start' ? [{ say: { text: 'Thanks for waiting.' } }] : [], 400));
    const { out } = await simulate(webhookStep(url, '          filler: { after_ms: 100, text: One moment please. }\n'), []);
    expect(out).toEqual(['< One moment please.', '< Thanks for waiting.', '-> hangup']);
  });

  const failures: Array<[string, (response: ServerResponse) => void, RegExp]> = [
    ['too slow', (response) => json(response, [], 1500), /no answer within 1000 ms/],
    ['an error status', (response) => void response.writeHead(500).end(), /the bot answered 500/],
    ['not JSON', (response) => void response.writeHead(200, { 'Content-Type': 'application/json' }).end('{actions:'), /not JSON/],
    ['a step it may not use', (response) => json(response, [{ goto: 'somewhere' }]), /action 1: a bot cannot answer with goto/],
    ['a step of a bad shape', (response) => json(response, [{ say: { txt: 'x' } }]), /action 1: \/say: unknown field "txt"|must have required property 'text'/],
    ['an unknown voice', (response) => json(response, [{ say: { text: 'x', voice: 'nobody' } }]), /action 1: say\.voice: unknown voice "nobody"/],
    ['something else than actions', (response) => json(response, { reply: 'hi' }), /neither a list of actions/],
  ];
  for (const [how, answer, reason] of failures) {
    it(`that answers ${how}: the fallback is said and on_fail keeps the call`, async () => {
      const { url } = await bot((entry, response) => (entry.body.event === 'hangup' ? json(response, []) : answer(response)));
      const { out, vars } = await simulate(
        `${webhookStep(url, '          fallback: Our assistant is not available.\n          on_fail: person\n')}      - hangup: {}\n      - id: person\n        transfer: { to: "+41445550110" }\n`,
        [],
      );
      expect(out).toEqual(['< Our assistant is not available.', '-> transfer +41445550110']);
      expect(vars['bot_error']).toMatch(reason);
    });
  }

  it('that cannot be reached: tried again, then the apology in the call’s language and a polite hangup', async () => {
    const { url, server } = await bot((_entry, response) => json(response, []));
    await new Promise((resolve) => server.close(resolve));
    const { out, vars, end } = await simulate(webhookStep(url, '          retries: 2\n'), []);
    expect(out).toEqual(['< Sorry, something went wrong on our side. Please call again later.', '-> hangup (bot failed)']);
    expect(vars['bot_error']).toMatch(/cannot be reached \(ECONNREFUSED\)/);
    expect(end).toBe('ended');
  });

  it('is told when the caller hangs up', async () => {
    const { url, received } = await bot((entry, response) => json(response, entry.body.event === 'start' ? [{ listen: { timeout_ms: 2000 } }] : []));
    const { end } = await simulate(webhookStep(url), ['hangup']);
    expect(end).toBe('caller-left');
    await arrived(received, 2);
    expect(received.map((entry) => entry.body.event)).toEqual(['start', 'hangup']);
  });
});
