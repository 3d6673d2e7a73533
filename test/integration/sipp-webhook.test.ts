/**
 * A webhook bot drives a real call: a SIPp caller reaches a route whose `webhook` step asks a
 * local HTTP bot (node:http on loopback) what to do; the bot answers with a menu, the caller
 * presses 1 (SIP INFO), the bot hears the choice and answers with a transfer, and the caller
 * receives the REFER, as a dialplan's own menu would have it. A caller who speaks (eSpeak NG
 * from a capture, heard by pocketsphinx) reaches the bot as a transcript with its words. A bot
 * that is down, too slow, or answers what is not JSON or not an action leads to the spoken
 * fallback (heard on the caller's own RTP socket) and the step's on_fail, with the call kept.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-logger.js';
import { callWithMedia, RtpCaller } from '../helpers/rtp-caller.js';
import { assertSippPassed, freePort, removeSippRuns, requireSipp, runSipp, sippScenario } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';
import { writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';

let telephony: StartedTelephony;
let bot: Server;
/** What the bot was sent (the fields these tests read). */
interface Turn {
  readonly event: string;
  readonly call: { readonly id: string; readonly route: string };
  readonly turn?: { readonly type: string; readonly choice?: string };
}
const turns: Turn[] = [];
/** The bot's connections each call's requests came over, by call id. */
const connections = new Map<string, Set<Socket>>();
let logs: Array<Record<string, unknown>> = [];
let captures: SippCaptures;

/** How the failing bots answer, by route; the slow one answers long after the step's timeout_ms (500). */
const FAILING: Record<string, (response: ServerResponse) => void> = {
  botslow: (response) =>
    void setTimeout(() => {
      if (!response.destroyed) response.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    }, 2000),
  botnotjson: (response) => void response.writeHead(200, { 'Content-Type': 'application/json' }).end('{actions:'),
  botunknown: (response) => void response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify([{ dance: { steps: 3 } }])),
};

beforeAll(async () => {
  await requireSipp();
  bot = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      const body = JSON.parse(raw) as Turn;
      turns.push(body);
      connections.set(body.call.id, (connections.get(body.call.id) ?? new Set()).add(request.socket));
      const failing = FAILING[body.call.route];
      if (failing) return failing(response);
      // The speech route listens until the caller hangs up.
      const speech = body.event !== 'hangup' && body.call.route === 'botspeech';
      const actions = speech
        ? [{ listen: { dtmf: false, timeout_ms: 8000, end_silence_ms: 500 } }]
        : body.event === 'start'
          ? [{ menu: { prompt: 'For a fault press 1.', options: [{ key: '1', goto: 'fault' }], timeout_ms: 8000, retries: 0 } }]
          : body.turn?.type === 'choice' && body.turn.choice === 'fault'
            ? [{ transfer: { to: '+41445550111', mode: 'refer' } }]
            : [];
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ actions }));
    });
  });
  await new Promise<void>((resolve) => bot.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(bot.address() as AddressInfo).port}/turn`;
  const down = `http://127.0.0.1:${await freePort('127.0.0.1', 't1')}/turn`;
  // After the fallback, on_fail's steps still talk to the caller before they end the call.
  const failing = (number: string, webhookUrl: string, extra = '') =>
    `  - number: "${number}"\n    language: en\n    voice: jonas\n    steps:\n      - answer: {}\n` +
    `      - webhook: { url: "${webhookUrl}", fallback: "Our assistant is not available.", on_fail: person${extra} }\n` +
    '      - hangup: { reason: after the bot }\n      - id: person\n        say: { text: "A person will call you back today." }\n' +
    '      - hangup: { reason: on_fail done }\n';
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    `name: bot\nroutes:\n  - number: "bot"\n    engines: synthetic\n    language: en\n    voice: jonas\n    steps:\n      - answer: {}\n      - webhook: { url: "${url}" }\n` +
      `  - number: "botspeech"\n    language: en\n    voice: jonas\n    steps:\n      - answer: {}\n      - webhook: { url: "${url}" }\n` +
      failing('botdown', down, ', retries: 1') +
      failing('botslow', url, ', timeout_ms: 500') +
      failing('botnotjson', url) +
      failing('botunknown', url),
    { SPRACHROHR_RTP_PORTS: '31650-31699', SPRACHROHR_STT_ENGINE: 'pocketsphinx', SPRACHROHR_TTS_ENGINE: 'espeak' },
    { logger: captured.logger },
  );
  captures = await writeSippCaptures(telephony.dir);
}, 60_000);

afterAll(async () => {
  await telephony?.close();
  await new Promise((resolve) => bot?.close(resolve));
  await removeSippRuns();
});

describe('a webhook bot on a real call', () => {
  it('answers with a menu, hears the key and transfers the caller by REFER', async () => {
    const result = await runSipp({
      scenario: sippScenario('menu-refer-info.xml'),
      target: `127.0.0.1:${telephony.service.endpoint.ports.udp}`,
      service: 'bot',
      timeoutMs: 30_000,
      variables: { payloads: '0 101' },
    });
    assertSippPassed(result);
    expect(turns.slice(0, 2)).toMatchObject([{ event: 'start' }, { event: 'turn', turn: { type: 'choice', choice: 'fault', digits: '1' } }]);
    // Both turns of the call came over one kept-alive connection.
    expect(connections.get(turns[0]!.call.id)?.size).toBe(1);
    expect(logs.find((line) => line['msg'] === 'refer')).toMatchObject({ result: 'transferred', target: `sip:+41445550111@127.0.0.1:${result.localPort}` });
  });

  it('hears the caller: the bot gets the transcript with its words, their times and confidence', async () => {
    const before = turns.length;
    assertSippPassed(
      await runSipp({
        scenario: sippScenario('basic-call.xml'),
        target: `127.0.0.1:${telephony.service.endpoint.ports.udp}`,
        service: 'botspeech',
        timeoutMs: 30_000,
        variables: { speech_pcap: captures.speechPcap },
      }),
    );
    const turn = turns.slice(before).find((entry) => entry.event === 'turn')?.turn as {
      type: string;
      transcript: string;
      confidence: number;
      words: Array<{ word: string; start: number; end: number; confidence: number }>;
    };
    expect(turn.type).toBe('speech');
    expect(turn.transcript.length).toBeGreaterThan(0);
    expect(turn.words.map((word) => word.word).join(' ')).toBe(turn.transcript);
    for (const word of turn.words) {
      expect(word.end).toBeGreaterThan(word.start);
      expect(word.confidence).toBeGreaterThanOrEqual(0);
      expect(word.confidence).toBeLessThanOrEqual(1);
    }
    expect(turn.confidence).toBeGreaterThan(0);
  });
});

describe('a webhook bot that fails on a real call leads to the spoken fallback and on_fail, with the call kept', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['down (connection refused)', 'botdown', /cannot be reached \(ECONNREFUSED\)/],
    ['slower than timeout_ms', 'botslow', /no answer within 500 ms/],
    ['answering what is not JSON', 'botnotjson', /the answer is not JSON/],
    ['answering an action that does not exist', 'botunknown', /action 1: an action has exactly one of/i],
  ];
  for (const [how, number, reason] of cases) {
    it(how, { timeout: 40_000 }, async () => {
      const before = logs.length;
      const caller = await RtpCaller.open();
      try {
        assertSippPassed(await callWithMedia(`127.0.0.1:${telephony.service.endpoint.ports.udp}`, number, caller, 'stream-call-hungup.xml'));
      } finally {
        caller.close();
      }
      const lines = logs.slice(before);
      const failed = lines.find((line) => line['msg'] === 'bot failed');
      expect(failed).toMatchObject({ reason: expect.stringMatching(reason) });
      // Log times are wall-clock milliseconds; the caller's packets are timed on the monotonic clock.
      const failedAt = Number(failed!['time']) - performance.timeOrigin;
      // The fallback and on_fail's prompt reached the caller (two seconds of sound or more) after the failure…
      expect(caller.voiced(failedAt).length).toBeGreaterThan(100);
      // …and only on_fail's hangup ended the call: no hangup of the step's own, none before on_fail was done.
      const hangups = lines.filter((line) => line['msg'] === 'hanging up');
      expect(hangups).toEqual([expect.objectContaining({ reason: 'on_fail done' })]);
      expect(Number(hangups[0]!['time'])).toBeGreaterThan(Number(failed!['time']) + 2000);
    });
  }
});
