/**
 * A webhook bot drives a real call: a SIPp caller reaches a route whose `webhook` step asks a
 * local HTTP bot (node:http on loopback) what to do; the bot answers with a menu, the caller
 * presses 1 (SIP INFO), the bot hears the choice and answers with a transfer, and the caller
 * receives the REFER, as a dialplan's own menu would have it. A caller who speaks (eSpeak NG
 * from a capture, heard by pocketsphinx) reaches the bot as a transcript with its words.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-logger.js';
import { assertSippPassed, removeSippRuns, requireSipp, runSipp, sippScenario } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';
import { writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';

let telephony: StartedTelephony;
let bot: Server;
const turns: Array<{ event: string; turn?: unknown }> = [];
let logs: Array<Record<string, unknown>> = [];
let captures: SippCaptures;

beforeAll(async () => {
  await requireSipp();
  bot = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      const body = JSON.parse(raw) as { event: string; turn?: { type: string; choice?: string } };
      turns.push(body);
      // The speech route listens until the caller hangs up.
      const speech = body.event !== 'hangup' && (body as { call?: { route?: string } }).call?.route === 'botspeech';
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
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    `name: bot\nroutes:\n  - number: "bot"\n    engines: synthetic\n    language: en\n    voice: jonas\n    steps:\n      - answer: {}\n      - webhook: { url: "${url}" }\n` +
      `  - number: "botspeech"\n    language: en\n    voice: jonas\n    steps:\n      - answer: {}\n      - webhook: { url: "${url}" }\n`,
    { SPRACHROHR_RTP_PORTS: '31650-31699', SPRACHROHR_STT_ENGINE: 'pocketsphinx' },
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
