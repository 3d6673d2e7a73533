/**
 * A voicemail from a real call, fetched over the API: `sprachrohr serve` answers a SIPp caller
 * whose speech (eSpeak NG, played from a capture) is recorded until it hangs up; the recording
 * is listed and fetched with a live key, its WAV is the caller's audio (compared sample by
 * sample with what was sent), it is transcribed by the embedded recogniser, and deleted.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/g711.js';
import { parseWav } from '../../src/audio/wav.js';
import { runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { assertSippPassed, freePort, removeSippRuns, requireSipp, runSipp, sippScenario } from '../helpers/sipp.js';
import { speechMulaw, writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';

const DIALPLAN = `name: voicemail
routes:
  - number: "voicemail"
    language: en
    voice: jonas
    steps:
      - answer: {}
      - record: { beep: false, max_seconds: 30, end_silence_ms: 3000 }
      - say: { text: Thank you. }
      - hangup: {}
`;

let dir: string;
let server: ServeProcess;
let sipPort: number;
let key: string;
let captures: SippCaptures;
let sent: Int16Array;

beforeAll(async () => {
  await requireSipp();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-voicemail-'));
  await fs.mkdir(path.join(dir, 'dialplans'));
  await fs.writeFile(path.join(dir, 'dialplans', 'voicemail.yaml'), DIALPLAN);
  sipPort = await freePort('127.0.0.1', 'u1');
  const env = {
    SPRACHROHR_DATA_DIR: path.join(dir, 'data'),
    SPRACHROHR_DIALPLANS_DIR: path.join(dir, 'dialplans'),
    SPRACHROHR_SIP_PORT: String(sipPort),
    SPRACHROHR_RTP_PORTS: '31600-31649',
  };
  key = JSON.parse((await runCli(['keys', 'create', '--name', 'voicemail', '--env', 'live', '--json'], env)).stdout).key as string;
  server = await startServe(env);
  captures = await writeSippCaptures(dir);
  sent = decodeMulaw(await speechMulaw());
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await removeSippRuns();
  await fs.rm(dir, { recursive: true, force: true });
});

const api = (route: string, init: RequestInit = {}) => fetch(`${server.baseUrl}${route}`, { ...init, headers: { 'X-API-Key': key } });

/** Normalised correlation of `reference` with `heard` shifted by `shift` samples. */
function correlation(heard: Int16Array, reference: Int16Array, shift: number): number {
  let dot = 0;
  let a = 0;
  let b = 0;
  for (let n = 0; n < reference.length; n++) {
    const m = n + shift;
    if (m < 0 || m >= heard.length) continue;
    dot += reference[n]! * heard[m]!;
    a += reference[n]! * reference[n]!;
    b += heard[m]! * heard[m]!;
  }
  return a > 0 && b > 0 ? dot / Math.sqrt(a * b) : 0;
}

/**
 * For each half second of what was sent, the best correlation with the recording at any shift
 * within `maxShift` samples of where it was sent: a late packet the jitter buffer concealed may
 * move the rest of the audio by a frame, so each window finds its own place.
 */
function windowCorrelations(heard: Int16Array, sent: Int16Array, maxShift: number): number[] {
  const window = 4000;
  const found: number[] = [];
  for (let start = 0; start + window <= sent.length; start += window) {
    const part = sent.subarray(start, start + window);
    let best = -1;
    let bestShift = 0;
    for (let shift = -maxShift; shift <= maxShift; shift += 8) {
      const value = correlation(heard, part, start + shift);
      if (value > best) [best, bestShift] = [value, shift];
    }
    for (let shift = bestShift - 8; shift <= bestShift + 8; shift++) best = Math.max(best, correlation(heard, part, start + shift));
    found.push(best);
  }
  return found;
}

describe('voicemail from a real call', () => {
  it('is recorded, listed, fetched as the caller’s audio, transcribed and deleted over the API', { timeout: 60_000 }, async () => {
    assertSippPassed(
      await runSipp({
        scenario: sippScenario('basic-call.xml'),
        target: `127.0.0.1:${sipPort}`,
        service: 'voicemail',
        timeoutMs: 20_000,
        variables: { speech_pcap: captures.speechPcap },
      }),
    );
    let listed: { recordings: Array<Record<string, unknown>>; next: string | null } = { recordings: [], next: null };
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
      listed = (await (await api('/recordings')).json()) as typeof listed;
      const transcript = listed.recordings[0]?.['transcript'] as { status: string } | undefined;
      if (transcript && transcript.status !== 'pending') break;
    }
    expect(listed.recordings).toHaveLength(1);
    const recording = listed.recordings[0]!;
    expect(recording).toMatchObject({ route: 'voicemail', called: 'voicemail', language: 'en', ended_by: 'hangup' });
    expect(recording['caller']).toMatch(/^sip:sipp@127\.0\.0\.1/);
    // The caller spoke the whole capture; the recording keeps it and at most half a second of silence after.
    expect(recording['duration_seconds']).toBeGreaterThan(captures.speechMs / 1000 - 0.3);
    expect(recording['duration_seconds']).toBeLessThan(captures.speechMs / 1000 + 0.8);
    const transcript = recording['transcript'] as { status: string; text: string | null };
    expect(transcript.status).toBe('done');
    expect(transcript.text?.length).toBeGreaterThan(0);

    const audio = await api(`/recordings/${String(recording['id'])}/audio`);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/wav');
    const bytes = new Uint8Array(await audio.arrayBuffer());
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ encoding: 'pcm', bitsPerSample: 16, channels: 1, sampleRateHz: 8000 });
    const samples = new Int16Array(bytes.slice(wav.dataOffset, wav.dataOffset + wav.dataBytes).buffer);
    // The same audio as sent, half a second at a time (G.711 both ways: equal up to where the recording began).
    const windows = windowCorrelations(samples, sent, 2000);
    expect(windows.length).toBeGreaterThanOrEqual(5);
    for (const value of windows) expect(value).toBeGreaterThan(0.95);

    expect((await api(`/recordings/${String(recording['id'])}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/recordings/${String(recording['id'])}`)).status).toBe(404);
  });
});
