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

const FRAME = 160;

/**
 * How many voiced 20 ms frames of what was sent are not found in the recording, each at its
 * own place: the jitter buffer may move the audio by a frame or more at a gap, so each frame is
 * looked for near where the one before it was found (wider when that fails). Frames sent before
 * the recording began are not counted; `compared` says how many were.
 */
function framesNotHeard(heard: Int16Array, sent: Int16Array): { compared: number; missing: number } {
  // Where the recording began: the place of the second half second of speech.
  let shift = 0;
  let best = -1;
  for (let candidate = -4000; candidate <= 800; candidate++) {
    const value = correlation(heard, sent.subarray(4000, 8000), 4000 + candidate);
    if (value > best) [best, shift] = [value, candidate];
  }
  let compared = 0;
  let missing = 0;
  for (let start = 0; start + FRAME <= sent.length; start += FRAME) {
    const frame = sent.subarray(start, start + FRAME);
    if (frame.reduce((sum, sample) => sum + Math.abs(sample), 0) / FRAME < 64) continue;
    if (start + shift < 0) continue;
    let found = -1;
    let foundShift = shift;
    for (const reach of [3 * FRAME, 25 * FRAME])
      if (found < 0.95)
        for (let candidate = shift - reach; candidate <= shift + reach; candidate++) {
          const value = correlation(heard, frame, start + candidate);
          if (value > found) [found, foundShift] = [value, candidate];
        }
    compared++;
    if (found < 0.95) missing++;
    else shift = foundShift;
  }
  return { compared, missing };
}

/** The gateway's `call quality` log line for the call, once it is written (5 s at most). */
async function callQuality(): Promise<Record<string, number>> {
  for (const deadline = Date.now() + 5000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const line = server
      .output()
      .split('\n')
      .find((entry) => entry.includes('"msg":"call quality"'));
    if (line) return JSON.parse(line) as Record<string, number>;
    if (Date.now() > deadline) throw new Error('no "call quality" line in the gateway\'s log');
  }
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
    // The same audio as sent, frame by frame (G.711 both ways: equal from where the recording
    // began). A frame may be missing only where the call's jitter buffer says it changed the audio:
    // a late, lost or discarded packet, or the frame faded in after a gap. On a quiet machine
    // nothing is missing.
    const { compared, missing } = framesNotHeard(samples, sent);
    expect(compared).toBeGreaterThan(100);
    const quality = await callQuality();
    const explained = quality['late']! + quality['lost']! + quality['discarded']! + quality['gaps']!;
    expect(missing, `missing ${missing} of ${compared} frames; the jitter buffer reports ${JSON.stringify(quality)}`).toBeLessThanOrEqual(explained);

    expect((await api(`/recordings/${String(recording['id'])}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/recordings/${String(recording['id'])}`)).status).toBe(404);
  });
});
