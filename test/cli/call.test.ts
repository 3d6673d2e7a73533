/**
 * `sprachrohr call` against a running gateway (started in this process, as `serve` starts it)
 * with SIPp as the callee: a call followed until the callee hangs up, a busy callee (exit 1
 * with the cause), and the usage errors. The command runs in-process: its arguments, the API it
 * calls and its output are those of the installed command.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callCommand } from '../../src/cli/call.js';
import { CommandFailure } from '../../src/cli/command-failure.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { loadConfig } from '../../src/config.js';
import { openKeyStore, startServer, type RunningServer } from '../../src/server.js';
import { reminderDialplan } from '../helpers/carrier-call.js';
import { eventuallyAsync } from '../helpers/eventually.js';
import { assertSippPassed, sippScenario, startRtpSink, startSippServer } from '../helpers/sipp.js';

let dir: string;
let server: RunningServer;
let client: string[];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cli-call-'));
  await fs.mkdir(path.join(dir, 'dialplans'));
  await fs.writeFile(
    path.join(dir, 'dialplans', 'reminder.yaml'),
    reminderDialplan('Guten Tag {{name}}, wir erinnern Sie an Ihren Termin morgen um neun Uhr in der Praxis Müller. Auf Wiederhören.'),
  );
  const config = loadConfig({
    SPRACHROHR_DATA_DIR: path.join(dir, 'data'),
    SPRACHROHR_DIALPLANS_DIR: path.join(dir, 'dialplans'),
    SPRACHROHR_PORT: '0',
    SPRACHROHR_SIP_PORT: '0',
    SPRACHROHR_RTP_PORTS: '43280-43299',
    SPRACHROHR_TTS_ENGINE: 'none',
    SPRACHROHR_STT_ENGINE: 'none',
  });
  const { store, keys } = await openKeyStore(config);
  const key = (await keys.create('ops', 'live')).key;
  await store.close();
  server = await startServer(config, pino({ level: 'silent' }));
  client = ['--url', `${server.address}/v1`, '--key', key];
}, 30_000);
afterAll(async () => {
  await server?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('sprachrohr call', () => {
  it('places the call, shows its progress and ends with how it ended', async () => {
    const sink = await startRtpSink();
    const progress: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      progress.push(String(chunk));
      return true;
    });
    try {
      const callee = await startSippServer({
        scenario: sippScenario('api-callee.uas.xml'),
        calls: 1,
        timeoutMs: 20_000,
        variables: { rtp_port: String(sink.port) },
      });
      const output = await callCommand([`sip:callee@${callee.address}`, '--dialplan', '/etc/anywhere/reminder.yaml', '--var', 'name=Meier', ...client]);
      assertSippPassed(await callee.result);
      expect(output).toMatch(/^call_\S+ {2}completed after \d+(\.\d)? s, ended by callee$/);
      const states = progress.map((line) => line.replace(/^call_\S+ {2}/, '').trim());
      expect(states[0]).toBe('queued');
      expect(states).toContain('answered');
      expect(states.at(-1)).toMatch(/^completed/);
      expect(sink.packets.length).toBeGreaterThan(20);
    } finally {
      spy.mockRestore();
      await sink.close();
    }
  }, 30_000);

  it('fails with the cause when the callee is busy, and prints the JSON of a call it does not follow', async () => {
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const busy = await startSippServer({ scenario: sippScenario('outbound-busy.uas.xml'), calls: 1, timeoutMs: 15_000 });
      const failure = await callCommand([`sip:callee@${busy.address}`, '--dialplan', 'reminder', ...client]).catch((error: unknown) => error);
      assertSippPassed(await busy.result);
      expect(failure).toBeInstanceOf(CommandFailure);
      expect((failure as Error).message).toBe(`the call to sip:callee@${busy.address} failed: busy (486)`);

      const ringing = await startSippServer({ scenario: sippScenario('cancel.uas.xml'), calls: 1, timeoutMs: 15_000 });
      const placed = JSON.parse(
        await callCommand([`sip:callee@${ringing.address}`, '--dialplan', 'reminder', '--ring-timeout', '5', '--no-wait', '--json', ...client]),
      );
      expect(placed).toMatchObject({ state: 'queued', dialplan: 'reminder.yaml', route: 'reminder' });
      // Hung up once it rings: the callee's scenario takes the CANCEL after its 180, not between its 100 and 180.
      await eventuallyAsync(
        async () =>
          ((await (await fetch(`${client[1]}/calls/${placed.id}`, { headers: { 'X-API-Key': client[3]! } })).json()) as { state: string }).state === 'ringing',
        10_000,
        'the call ringing',
      );
      await fetch(`${client[1]}/calls/${placed.id}`, { method: 'DELETE', headers: { 'X-API-Key': client[3]! } });
      assertSippPassed(await ringing.result);
    } finally {
      spy.mockRestore();
    }
  }, 30_000);

  it('says what is missing or malformed before calling anything, and passes on the API’s refusal', async () => {
    await expect(callCommand(['--dialplan', 'reminder', ...client])).rejects.toThrow(UsageError);
    await expect(callCommand(['+41441234567', ...client])).rejects.toThrow(/--dialplan FILE/);
    await expect(callCommand(['+41441234567', '--dialplan', 'reminder', '--var', 'Name=x', ...client])).rejects.toThrow(/NAME=VALUE/);
    await expect(callCommand(['+41441234567', '--dialplan', 'reminder', '--ring-timeout', 'soon', ...client])).rejects.toThrow(/whole seconds/);
    await expect(callCommand(['+41441234567', '--dialplan', 'reminder', '--amd', 'yes', ...client])).rejects.toThrow(/detect or detect_message_end/);
    await expect(callCommand(['+41441234567', '--dialplan', 'reminder', ...client])).rejects.toThrow(/stt\.invalid_request \(400\).*name the trunk/);
  });
});
