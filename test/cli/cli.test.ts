/**
 * The `sprachrohr` command: help, dialect, keys, accounts, entitlements, usage, and tts/stt
 * against a running `serve`. Most invocations run in this process (`runCliInProcess`: the
 * dispatch, output and exit status of the installed command, without a process start each).
 * These run the built command in a process of its own, as the process boundary is what they
 * test: `--help` and an unknown command (the exit status the shell sees, 0 and 2), `serve`
 * (listening, shutdown on SIGTERM, its exit status), and `tts --stream --in - --out -` (lines
 * read from a real pipe, the audio written to the real standard output).
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav } from '../helpers/audio-fixtures.js';
import { runCli, runCliInProcess, startServe } from '../helpers/cli.js';
import { probeAudio } from '../helpers/ffmpeg.js';

let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-cli-'));
  env = { SPRACHROHR_DATA_DIR: path.join(dir, 'data'), SPRACHROHR_LOG_LEVEL: 'info' };
});
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

describe('sprachrohr help', () => {
  it('explains every command', async () => {
    for (const command of ['serve', 'keys', 'accounts', 'entitlements', 'usage', 'tts', 'stt', 'dialect', 'dialplan', 'models']) {
      const result = await runCliInProcess([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout).toContain(`sprachrohr ${command}`);
      expect(result.stdout).toMatch(/Usage/);
    }
    const main = await runCli(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toMatch(/serve .*\n.*keys/);
    const unknown = await runCli(['dance']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "dance"');
  });

  it('names the bad variable and exits without a stack trace', async () => {
    const result = await runCliInProcess(['serve'], { ...env, SPRACHROHR_PORT: 'eighty' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('SPRACHROHR_PORT: must be a whole number');
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

describe('sprachrohr dialect', () => {
  it('prints the rendering of each text', async () => {
    const result = await runCliInProcess(['dialect', '--dialect', 'bern', 'Guten Tag, drücken Sie die Eins.', 'Das kostet CHF 12.50.']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Grüessech, drücket d Eis.\nDas choschtet zwöuf Franke füfzg.\n');
    const bad = await runCliInProcess(['dialect', '--dialect', 'mars', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--dialect must be one of standard, zurich, bern');
  });

  it('prints the pronunciation in IPA with --ipa', async () => {
    const result = await runCliInProcess(['dialect', '--dialect', 'zurich', '--ipa', 'Guten Tag, drücken Sie die Eins. Mail an info@sbb.ch']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Grüezi, drücked Si d Eis. Mail an info@sbb.ch\n/ˈɡryətsɪ/, /ˈdrʏkəd/ /sɪ/ /ˈdei̯s/. /mei̯l/ /an/ [info@sbb.ch]\n');
  });
});

describe('sprachrohr keys', () => {
  it('creates, lists, rotates and revokes keys in the data folder', async () => {
    const created = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'hotline', '--env', 'live', '--json'], env)).stdout);
    expect(created.key).toMatch(/^sv_[A-Za-z0-9]{32}$/);
    const listed = JSON.parse((await runCliInProcess(['keys', 'list', '--json'], env)).stdout);
    expect(listed).toEqual([expect.objectContaining({ id: created.id, name: 'hotline', environment: 'live', state: 'active' })]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    const plain = await runCliInProcess(['keys', 'list'], env);
    expect(plain.stdout).toContain(created.id);
    const rotated = JSON.parse((await runCliInProcess(['keys', 'rotate', created.id, '--json'], env)).stdout);
    expect(rotated.old.state).toMatch(/^superseded, stops /);
    expect(rotated.new.key).toMatch(/^sv_/);
    const ended = await runCliInProcess(['keys', 'rotate', '--end-overlap', created.id], env);
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain('Ended the overlap');
    const revoked = await runCliInProcess(['keys', 'revoke', rotated.new.id], env);
    expect(revoked.stdout).toContain(`Revoked ${rotated.new.id}`);
    const again = await runCliInProcess(['keys', 'revoke', rotated.new.id], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already revoked');
    const missing = await runCliInProcess(['keys', 'create'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name');
    const badEnv = await runCliInProcess(['keys', 'create', '--name', 'x', '--env', 'staging'], env);
    expect(badEnv.stderr).toContain('--env must be live or sandbox');
  });
});

describe('sprachrohr accounts', () => {
  it('makes accounts that keys join, shows their keys and webhook secret, and rotates it', async () => {
    const created = await runCliInProcess(['accounts', 'create', 'zurich-utility', '--email', 'ops@example.ch', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account).toMatchObject({ name: 'zurich-utility', emails: ['ops@example.ch'], keys: [], id: expect.stringMatching(/^acct_/) });
    expect(account.webhook_secret).toMatch(/^[0-9a-f]{64}$/);
    const key = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'ivr', '--env', 'live', '--account', 'zurich-utility', '--json'], env)).stdout);
    expect(key.account).toBe('zurich-utility');
    const unassigned = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'lab', '--json'], env)).stdout);
    expect(unassigned.account).toBe('default');
    const shown = JSON.parse((await runCliInProcess(['accounts', 'show', 'zurich-utility', '--json'], env)).stdout);
    expect(shown.keys).toEqual([{ id: key.id, name: 'ivr', environment: 'live' }]);
    expect(shown.webhook_secret).toBe(account.webhook_secret);
    // Without --json the secret stays off the screen.
    const plain = await runCliInProcess(['accounts', 'show', 'zurich-utility'], env);
    expect(plain.stdout).toContain(key.id);
    expect(plain.stdout).not.toContain(account.webhook_secret);
    const rotated = JSON.parse((await runCliInProcess(['accounts', 'rotate-secret', 'zurich-utility', '--json'], env)).stdout);
    expect(rotated.webhook_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.webhook_secret).not.toBe(account.webhook_secret);
    expect((await runCliInProcess(['accounts', 'set-emails', 'zurich-utility'], env)).stdout).toContain('go to: nobody');
    const listed = JSON.parse((await runCliInProcess(['accounts', 'list', '--json'], env)).stdout) as Array<{ name: string; webhook_secret?: string }>;
    expect(listed.map((entry) => entry.name)).toEqual(['default', 'zurich-utility']);
    expect(listed.every((entry) => entry.webhook_secret === undefined)).toBe(true);
  });

  it('gives a new account its evaluation allowance, and manages entitlements', async () => {
    const created = JSON.parse((await runCliInProcess(['accounts', 'create', 'bern-shop', '--json'], env)).stdout);
    expect(created.entitlements).toEqual([
      expect.objectContaining({ kind: 'evaluation', direction: 'any', granted_seconds: 3600, used_seconds: 0, remaining_seconds: 3600, enforcement: 'hard' }),
    ]);
    const bare = JSON.parse((await runCliInProcess(['accounts', 'create', 'own-use', '--no-evaluation', '--json'], env)).stdout);
    expect(bare.entitlements).toEqual([]);
    const added = await runCliInProcess(
      ['entitlements', 'add', '--account', 'bern-shop', '--kind', 'credit', '--direction', 'tts', '--credits', '500', '--valid-until', '2099-12-31', '--json'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const credit = JSON.parse(added.stdout);
    expect(credit).toMatchObject({ kind: 'credit', direction: 'tts', unit: 'credits', granted_credits: 500, valid_until: '2100-01-01T00:00:00.000Z' });
    const toppedUp = await runCliInProcess(['entitlements', 'top-up', String(credit.id), '--credits', '250'], env);
    expect(toppedUp.stdout).toMatch(/0 of 750 credits used/);
    const listed = JSON.parse((await runCliInProcess(['entitlements', 'list', '--account', 'bern-shop', '--json'], env)).stdout);
    expect(listed.map((entry: { kind: string }) => entry.kind)).toEqual(['evaluation', 'credit']);
    expect((await runCliInProcess(['entitlements', 'remove', String(listed[0].id)], env)).stdout).toContain(`Removed entitlement #${listed[0].id}`);
    expect((await runCliInProcess(['entitlements', 'list', '--account', 'bern-shop'], env)).stdout).toMatch(/^#\d+ +credit +tts +hard +0 of 750 credits used/);
    expect((await runCliInProcess(['usage', '--account', 'bern-shop'], env)).stdout).toMatch(/entitlements now:\n +#\d+ +credit/);
    expect((await runCliInProcess(['entitlements', 'list', '--account', 'own-use'], env)).stdout).toContain('no entitlements: its use is not capped');
  });

  const refusals: Array<[string, string[], RegExp]> = [
    [
      'an entitlement of no kind',
      ['entitlements', 'add', '--account', 'default', '--kind', 'gift', '--seconds', '5'],
      /--kind must be evaluation, committed or credit/,
    ],
    ['credit in seconds', ['entitlements', 'add', '--account', 'default', '--kind', 'credit', '--seconds', '5'], /granted in --credits/],
    ['a hard commitment', ['entitlements', 'add', '--account', 'default', '--kind', 'committed', '--seconds', '5', '--enforcement', 'hard'], /never refuses/],
    [
      'an end in the past',
      ['entitlements', 'add', '--account', 'default', '--kind', 'evaluation', '--seconds', '5', '--valid-until', '2020-01-01'],
      /has passed/,
    ],
    ['an amount that is not a number', ['entitlements', 'add', '--account', 'default', '--kind', 'evaluation', '--seconds', 'lots'], /takes a number/],
    ['a top-up of an unknown entitlement', ['entitlements', 'top-up', '999', '--credits', '5'], /no entitlement #999/],
    ['a top-up without an id', ['entitlements', 'top-up', '--credits', '5'], /needs the entitlement's ID/],
    ['a name with capitals and spaces', ['accounts', 'create', 'Zurich Utility'], /an account name is 1 to 63 characters/],
    ['a name taken', ['accounts', 'create', 'default'], /already an account "default"/],
    ['an address that is not one', ['accounts', 'create', 'bern', '--email', 'nobody'], /"nobody" is not an e-mail address/],
    ['an account that does not exist', ['accounts', 'show', 'nowhere'], /no account "nowhere"/],
    ['a key for an account that does not exist', ['keys', 'create', '--name', 'x', '--account', 'nowhere'], /no account "nowhere"/],
    ['no name', ['accounts', 'show'], /needs an account NAME/],
    ['usage without an account', ['usage'], /name the account with --account NAME/],
    ['usage of an account that does not exist', ['usage', '--account', 'nowhere'], /no account "nowhere"/],
    ['usage over a window that ends before it starts', ['usage', '--account', 'default', '--from', '2026-11-05', '--to', '2026-11-01'], /must come before/],
  ];
  for (const [what, argv, message] of refusals)
    it(`refuses ${what} (exit 2)`, async () => {
      const result = await runCliInProcess(argv, env);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
    });
});

describe('sprachrohr serve, tts and stt', () => {
  it('serves the API; tts writes audio and stt prints a transcript', async () => {
    const key = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'cli', '--json'], env)).stdout).key as string;
    const server = await startServe(env);
    let synthesisedSeconds = 0;
    try {
      const client = { SPRACHROHR_URL: server.baseUrl, SPRACHROHR_API_KEY: key };
      const wav = path.join(dir, 'hello.wav');
      const tts = await runCliInProcess(['tts', '--text', 'Grüezi mitenand', '--out', wav, '--rate', '16000'], client);
      expect(tts.code, tts.stderr).toBe(0);
      expect(tts.stdout).toMatch(/Wrote \d+ bytes of wav .*sandbox/);
      const probe = await probeAudio(await fs.readFile(wav));
      expect(probe).toMatchObject({ codec: 'pcm_s16le', sampleRateHz: 16000 });
      synthesisedSeconds = probe.decodedSeconds;
      const stt = await runCliInProcess(['stt', wav, '--lang', 'de-CH-bern'], client);
      expect(stt.code, stt.stderr).toBe(0);
      const transcript = JSON.parse(stt.stdout);
      expect(transcript.lang).toBe('de-CH-bern');
      expect(transcript.duration_s).toBeCloseTo(probe.decodedSeconds, 2);
      const refused = await runCliInProcess(['tts', '--text', 'x', '--out', path.join(dir, 'x.mp3'), '--speed', '9'], client);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('tts.invalid_speed (400)');
      const noKey = await runCliInProcess(['stt', wav], { SPRACHROHR_URL: server.baseUrl, SPRACHROHR_API_KEY: '' });
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toContain('an API key is needed');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    // The two that succeeded are in the ledger, as sandbox traffic of the key's account; the refused one is not.
    const report = await runCliInProcess(['usage', '--account', 'default'], env);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/^tts {8}batch {12}0 +0\.000 +0$/m);
    expect(report.stdout).toMatch(/sandbox \(never billed\): 2 requests, [\d.]+ s of audio/);
    const csv = (await runCliInProcess(['usage', '--account', 'default', '--csv'], env)).stdout.trim().split('\n');
    const today = new Date().toISOString().slice(0, 10);
    expect(csv[0]).toBe('date,environment,direction,mode,requests,audio_seconds,billable_seconds');
    expect(csv.slice(1).map((line) => line.split(',').slice(0, 5).join(','))).toEqual([`${today},sandbox,stt,batch,1`, `${today},sandbox,tts,batch,1`]);
    expect(Number(csv[2]!.split(',')[5])).toBeCloseTo(synthesisedSeconds, 2);
  });

  it('streams synthesis and recognition through the realtime endpoints (--stream)', async () => {
    const key = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'stream', '--json'], env)).stdout).key as string;
    // Not a test of host load: a busy test machine must not get its sessions refused for it.
    const server = await startServe({ ...env, SPRACHROHR_REALTIME_MAX_LOOP_DELAY_MS: '60000' });
    try {
      const client = { SPRACHROHR_URL: server.baseUrl, SPRACHROHR_API_KEY: key };
      const streamed = path.join(dir, 'streamed.pcm');
      const tts = await runCliInProcess(['tts', '--stream', '--text', 'Grüezi mitenand.', '--out', streamed, '--rate', '16000'], client);
      expect(tts.code, tts.stderr).toBe(0);
      expect(tts.stdout).toMatch(/Streamed \d+ bytes of pcm16 \([\d.]+ s in \d+ frames, first audio after \d+ ms\) to /);
      const batch = path.join(dir, 'batch.pcm');
      expect((await runCliInProcess(['tts', '--text', 'Grüezi mitenand.', '--out', batch, '--format', 'pcm16', '--rate', '16000'], client)).code).toBe(0);
      expect((await fs.readFile(streamed)).equals(await fs.readFile(batch))).toBe(true);
      // Lines from standard input go out as they are read; the audio can go to stdout.
      const piped = await runCli(['tts', '--stream', '--in', '-', '--out', '-', '--format', 'mulaw', '--rate', '8000'], client, 'Grüezi.\nWie gaht s?\n');
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout.length).toBeGreaterThan(8000 * 0.5);
      expect(piped.stderr).toMatch(/Streamed \d+ bytes of mulaw/);

      const wav = path.join(dir, 'streamed.wav');
      expect((await runCliInProcess(['tts', '--text', 'Hallo zäme. Wie gaht s?', '--out', wav, '--rate', '16000'], client)).code).toBe(0);
      const stt = await runCliInProcess(['stt', '--stream', wav, '--fast', '--lang', 'de-CH'], client);
      expect(stt.code, stt.stderr).toBe(0);
      expect(stt.stdout).toMatch(/^= \[de-CH\] .+$/m);
      expect(stt.stdout).toMatch(/\d+ final transcripts?, [\d.]+ s of audio/);

      const refused = await runCliInProcess(['tts', '--stream', '--text', 'x', '--out', path.join(dir, 'x.mp3')], client);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('tts.unsupported_format: ');
      expect(refused.stderr).toContain('mp3 cannot be streamed');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('finishes a request in flight on SIGTERM, refuses new requests with 503 meanwhile, then exits', async () => {
    const key = JSON.parse((await runCliInProcess(['keys', 'create', '--name', 'shutdown', '--json'], env)).stdout).key as string;
    const server = await startServe(env);
    const url = new URL(`${server.baseUrl}/stt`);
    const boundary = 'b0undary';
    const audio = toneWav(1);
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      request.on('error', reject);
      // Send half the upload, stop the server, then send the rest.
      request.write(Buffer.concat([head, audio.subarray(0, 1000)]));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => {
          // Draining: a new request is refused with the envelope, while the upload goes on.
          const probe = http.get({ host: url.hostname, port: url.port, path: '/v1/capabilities', headers: { 'x-api-key': key } });
          probe.on('error', reject);
          probe.on('response', (refused) => {
            let body = '';
            refused.on('data', (chunk: Buffer) => (body += chunk.toString()));
            refused.on('end', () => {
              try {
                expect(refused.statusCode).toBe(503);
                expect(refused.headers['retry-after']).toBe('5');
                expect(JSON.parse(body).error.code).toBe('tts.unavailable');
              } catch (error) {
                reject(error as Error);
              }
              request.end(Buffer.concat([audio.subarray(1000), tail]));
            });
          });
        }, 300);
      }, 300);
    });
    const result = await response;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).duration_s).toBeCloseTo(1, 2);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shutting down');
  });
});
