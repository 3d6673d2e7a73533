/**
 * A dialplan's own webhook secret (`webhook_secret_env`) against a real HTTP bot on loopback
 * (node:http): the bot checks the signature as a bot would — HMAC-SHA256 over
 * `<timestamp>.<raw body>` — and finds its dialplan's secret behind every request, hand-overs
 * and the hangup event included, and the deployment's behind none; a dialplan without one
 * still signs with the deployment's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDialectRenderer } from '../../engine/registry.js';
import { botSecret } from '../../src/bots/bot-secret.js';
import { parseDialplan } from '../../src/dialplan/dialplan-loader.js';
import { runRoute } from '../../src/dialplan/run-route.js';
import { SimulatedCall } from '../../src/dialplan/simulation/simulated-call.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/recordings/webhook-signature.js';

const DEPLOYMENT_SECRET = 'deployment-secret-0123456789abcdefgh';
const DIALPLAN_SECRET = 'acme-dialplan-secret-0123456789abcdef';

/** What the bot saw of one request: its event, and which of the two secrets its signature is made with. */
interface Seen {
  readonly event: string;
  readonly signedBy: 'dialplan' | 'deployment' | 'neither';
}

/** Whether `signature` is `sha256=` and the HMAC of `<timestamp>.<body>` under `secret`, compared in constant time as a bot should. */
function signedWith(secret: string, timestamp: string, body: string, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A bot on loopback that answers `actions` to `start` and nothing to the rest. */
async function bot(actions: unknown[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // The raw bytes, not a re-serialised parse: the signature covers exactly what was sent.
      const raw = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(request.headers[TIMESTAMP_HEADER.toLowerCase()] ?? '');
      const signature = String(request.headers[SIGNATURE_HEADER.toLowerCase()] ?? '');
      const signedBy = signedWith(DIALPLAN_SECRET, timestamp, raw, signature)
        ? 'dialplan'
        : signedWith(DEPLOYMENT_SECRET, timestamp, raw, signature)
          ? 'deployment'
          : 'neither';
      const event = (JSON.parse(raw) as { event: string }).event;
      seen.push({ event, signedBy });
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(event === 'start' ? actions : []));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/turn`, seen };
}

/** Waits (2 s at most) for `count` requests: the call does not wait for the hangup event. */
async function arrived(seen: Seen[], count: number): Promise<void> {
  for (const deadline = Date.now() + 2000; seen.length < count && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Runs a file's route 100 (a webhook step on `url`) in a simulated call of a deployment whose secret is {@link DEPLOYMENT_SECRET}. */
async function call(url: string, field: string): Promise<string[]> {
  const text = `name: acme\n${field}routes:\n  - number: "100"\n    language: en\n    voice: anna\n    steps:\n      - webhook:\n          url: "${url}"\n          timeout_ms: 1000\n`;
  const [route] = parseDialplan('acme.yaml', text, { env: { ACME_BOT_SECRET: DIALPLAN_SECRET } });
  const out: string[] = [];
  const simulated = new SimulatedCall(
    route!,
    { caller: 'sip:+41790000000@example.ch', called: '100', at: new Date('2026-11-25T10:00:00+01:00'), target: 'answer', webhookSecret: DEPLOYMENT_SECRET },
    { readLine: async () => null, print: (line) => out.push(line) },
    createDialectRenderer(),
    pino({ level: 'silent' }),
  );
  expect(botSecret(simulated)).toBe(field === '' ? DEPLOYMENT_SECRET : DIALPLAN_SECRET);
  const end = await runRoute(simulated);
  if (end === 'last-step') await simulated.hangup();
  return out;
}

describe('a dialplan with its own webhook secret', () => {
  it('signs its bots’ requests with it, a hand-over and the hangup event included, and never with the deployment’s', async () => {
    const second = await bot([{ say: { text: 'Second bot.' } }, { listen: { timeout_ms: 1000 } }]);
    const first = await bot([{ say: { text: 'First bot.' } }, { webhook: { url: second.url } }]);
    const out = await call(first.url, 'webhook_secret_env: ACME_BOT_SECRET\n');
    expect(out).toEqual(['< First bot.', '< Second bot.']);
    await arrived(second.seen, 2);
    expect(first.seen).toEqual([{ event: 'start', signedBy: 'dialplan' }]);
    expect(second.seen).toEqual([
      { event: 'start', signedBy: 'dialplan' },
      { event: 'hangup', signedBy: 'dialplan' },
    ]);
  });

  it('is not needed: without one the deployment’s secret signs as before', async () => {
    const only = await bot([{ say: { text: 'Hello.' } }]);
    const out = await call(only.url, '');
    expect(out).toEqual(['< Hello.', '-> hangup']);
    expect(only.seen).toEqual([{ event: 'start', signedBy: 'deployment' }]);
  });
});
