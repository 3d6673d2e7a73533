/**
 * The text-mode bridge at one edge the SIPp tests cannot reach on demand: the caller hangs up
 * while a transfer the bot asked for is under way, and the transfer then fails with the call.
 * The bot is a real WebSocket server on loopback and the recogniser the sandbox engine; the
 * call around them is a stand-in, since what is tested is only what the bridge makes of that
 * failure: the call's end (`ended`, session.end to the bot), not a failure of the bot.
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { EngineRegistry } from '../../engine/registry.js';
import { runTextStream, type TextStreamCall } from '../../src/bots/text-stream-bridge.js';
import { loadConfig } from '../../src/config.js';
import { startEngines } from '../../src/server.js';
import { RecognitionSession } from '../../src/speech/recognition-session.js';
import type { MediaChannel } from '../../src/telephony/media/media-channel.js';

let server: WebSocketServer;
let engines: EngineRegistry;
const received: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  engines = await startEngines(loadConfig({ SPRACHROHR_TTS_ENGINE: 'none', SPRACHROHR_STT_ENGINE: 'none' }));
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      received.push(message);
      if (message['type'] === 'session.start') socket.send(JSON.stringify({ type: 'transfer', target: 'sip:agent@127.0.0.1' }));
    });
  });
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await engines.close();
});

describe('a text bot whose transfer fails because the caller hung up', () => {
  it("ends the stream as the call's end, not as a failure of the bot", async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/text`);
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    const callEnded = new AbortController();
    const errors: unknown[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
    const call: TextStreamCall = {
      media: new EventEmitter() as unknown as MediaChannel,
      recognition: new RecognitionSession([{ language: 'de-CH', engine: engines.sandbox.sttStream }], [], 8000, callEnded.signal),
      voice: { language: 'de-CH', voice: 'anna' },
      call: { id: 'call-1', caller: 'sip:caller@127.0.0.1', called: '0441234567', route: '0441234567' },
      parameters: {},
      variables: {},
      logger,
      speak: () => Promise.resolve({ interrupted: false, stopped: false, playedSeconds: 0 }),
      // The caller leaves while the target rings; the transfer's own hang-up then fails with the call.
      transfer: async () => {
        callEnded.abort();
        throw new Error('the dialog has ended');
      },
      hangup: () => Promise.resolve(),
    };
    const outcome = await runTextStream(socket, call, callEnded.signal);
    expect(outcome).toMatchObject({ result: 'ended' });
    expect(errors).toEqual([]);
    socket.close();
  });
});
