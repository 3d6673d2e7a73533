/**
 * The README's example bots run as written: each code block is taken from README.md, started
 * with Node on a free port (the only change), and called through the gateway by a SIPp caller
 * speaking eSpeak NG English from a capture. The media bot echoes the caller and ends on a key;
 * the text bot answers a transcript and hangs up; the webhook bot asks, hears and answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-logger.js';
import { RtpCaller } from '../helpers/rtp-caller.js';
import { assertSippPassed, freePort, removeSippRuns, requireSipp, runSipp, sippScenario } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';
import { dtmfPackets, readRtpPcap, writeSippCaptures, type RtpPacket } from './sipp/make-pcap.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The gateway's two RTP ports (the fewest it takes), so the caller can send before the gateway has sent anything. */
const GATEWAY_RTP = [31_800, 31_802];

let telephony: StartedTelephony;
let logs: Array<Record<string, unknown>> = [];
let speech: RtpPacket[];
const bots: ChildProcess[] = [];
let dir = '';

/** The README's ```js block that contains `marker`, with its port replaced. */
async function readmeBot(marker: string, from: number, to: number, dir: string): Promise<string> {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!).find((code) => code.includes(marker));
  if (!block) throw new Error(`the README has no bot with ${marker}`);
  expect(block).toContain(String(from));
  const file = path.join(dir, `bot-${to}.mjs`);
  await fs.writeFile(file, block.replaceAll(String(from), String(to)));
  return file;
}

async function startBot(file: string, port: number): Promise<void> {
  const child = spawn(process.execPath, [file], { cwd: path.dirname(file), stdio: ['ignore', 'inherit', 'inherit'] });
  bots.push(child);
  for (let attempt = 0; attempt < 100; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createServer().listen(port, '127.0.0.1');
      socket.on('listening', () => socket.close(() => resolve(false)));
      socket.on('error', () => resolve(true));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the README bot did not listen on ${port}`);
}

beforeAll(async () => {
  await requireSipp();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'readme-bots-'));
  // The bots import ws as a user's project would: from a node_modules beside them.
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const [webhookPort, streamPort] = [await freePort('127.0.0.1', 't1'), await freePort('127.0.0.1', 't1')];
  await startBot(await readmeBot("from 'node:http'", 3000, webhookPort, dir), webhookPort);
  await startBot(await readmeBot("from 'ws'", 3001, streamPort, dir), streamPort);
  const route = (number: string, step: string) =>
    `  - number: "${number}"\n    language: en\n    voice: jonas\n    steps:\n      - ${step}\n      - hangup: { reason: bot done }\n`;
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    'name: readme\nroutes:\n' +
      route('media', `stream: { url: "ws://127.0.0.1:${streamPort}/media" }`) +
      route('text', `stream: { url: "ws://127.0.0.1:${streamPort}/text", mode: text }`) +
      // As in dialplans/bot-webhook.yaml, the call is answered before the bot takes it.
      route('webhook', `answer: {}\n      - webhook: { url: "http://127.0.0.1:${webhookPort}/turn" }`),
    { SPRACHROHR_RTP_PORTS: `${GATEWAY_RTP[0]}-${GATEWAY_RTP[1]! + 1}`, SPRACHROHR_STT_ENGINE: 'pocketsphinx', SPRACHROHR_TTS_ENGINE: 'espeak' },
    { logger: captured.logger },
  );
  speech = readRtpPcap(await fs.readFile((await writeSippCaptures(telephony.dir)).speechPcap));
}, 60_000);

afterAll(async () => {
  for (const bot of bots) bot.kill();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
  await telephony?.close();
  await removeSippRuns();
});

/** A call to `number` in which the caller speaks (and then presses `key`); the gateway hangs up. `spokeUntil`: when the caller's last packet went. */
async function speakTo(number: string, key?: string): Promise<{ caller: RtpCaller; spokeUntil: number }> {
  const caller = await RtpCaller.open();
  try {
    const sipp = runSipp({
      scenario: sippScenario('stream-call-hungup.xml'),
      target: `127.0.0.1:${telephony.service.endpoint.ports.udp}`,
      service: number,
      timeoutMs: 30_000,
      variables: { payloads: '0 101', rtp_port: String(caller.port) },
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const last = speech.at(-1)!;
    const packets = key ? [...speech, ...dtmfPackets(key, { sequence: last.sequence + 1, timestamp: last.timestamp + 160, ssrc: last.ssrc })] : speech;
    await caller.play(packets, GATEWAY_RTP);
    const spokeUntil = performance.now();
    assertSippPassed(await sipp);
    return { caller, spokeUntil };
  } finally {
    caller.close();
  }
}

describe("the README's example bots", () => {
  it('the Twilio media bot echoes the caller until a key, and the dialplan goes on', { timeout: 40_000 }, async () => {
    const before = logs.length;
    const { caller } = await speakTo('media', '5');
    const echoed = new Set(caller.received.map((packet) => Buffer.from(packet.payload).toString('hex')));
    const spoken = [...new Set(speech.map((packet) => Buffer.from(packet.payload.map((byte) => (byte === 0x7f ? 0xff : byte))).toString('hex')))].filter(
      (payload) => !/^(ff|fe|7e)+$/.test(payload),
    );
    expect(spoken.filter((payload) => echoed.has(payload)).length / spoken.length).toBeGreaterThan(0.95);
    const lines = logs.slice(before);
    expect(lines.find((line) => line['msg'] === 'bot stream done')).toMatchObject({ result: 'closed' });
    expect(lines.find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'bot done' });
  });

  it('the text bot greets, answers what the caller said and hangs up', { timeout: 40_000 }, async () => {
    const before = logs.length;
    const { caller, spokeUntil } = await speakTo('text');
    const lines = logs.slice(before);
    expect(lines.find((line) => line['msg'] === 'bot stream done')).toMatchObject({ result: 'ended', reason: 'the bot hung up' });
    // The answer came after the caller had spoken: a second or more of it.
    expect(caller.received.filter((packet) => packet.atMs > spokeUntil).length).toBeGreaterThan(50);
  });

  it('the webhook bot asks, hears the caller and answers', { timeout: 40_000 }, async () => {
    const before = logs.length;
    const { caller } = await speakTo('webhook');
    const lines = logs.slice(before);
    expect(lines.some((line) => line['msg'] === 'bot failed')).toBe(false);
    // The question and the answer (the caller's first words end the turn: the answer may overlap the rest).
    expect(caller.received.length).toBeGreaterThan(100);
    // The bot's hangup ended the call after the caller had been heard.
    expect(lines.find((line) => line['msg'] === 'call ended')).toMatchObject({ reason: 'hangup', sttSeconds: expect.any(Number) });
    expect(lines.find((line) => line['msg'] === 'call ended')!['sttSeconds']).toBeGreaterThan(0.3);
  });
});
