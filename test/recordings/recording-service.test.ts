/**
 * The recording service on a real store and folder: files written whole and private, the index,
 * pages, deletion, the retention sweep with a fixed clock, the upkeep at start, and the
 * transcript without a recogniser and with a real (tiny, hand-made Vosk) one.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { concatPcm } from '../../src/audio/pcm.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { parseWav, WAV_HEADER_BYTES } from '../../src/audio/wav.js';
import { loadConfig } from '../../src/config.js';
import { InvalidCursorError } from '../../src/recordings/recording-cursor.js';
import type { Recording } from '../../src/recordings/recording-service.js';
import { startEngines } from '../../src/server.js';
import { tonePcm } from '../helpers/audio-fixtures.js';
import { silencePcm } from '../helpers/speech-audio.js';
import { writeTinyVoskModel } from '../helpers/tiny-vosk-model.js';
import { message, recordingFixture, type RecordingFixture } from './recording-fixture.js';

const fixtures: RecordingFixture[] = [];
async function fixture(options?: Parameters<typeof recordingFixture>[0]): Promise<RecordingFixture> {
  const started = await recordingFixture(options);
  fixtures.push(started);
  return started;
}
afterEach(async () => {
  for (const started of fixtures.splice(0)) await started.close();
});

/** Saves a message at each of `times`, in order. */
async function saveAt(f: RecordingFixture, times: string[]): Promise<Recording[]> {
  const recordings: Recording[] = [];
  for (const time of times) {
    f.setNow(time);
    recordings.push(await f.service.save(message()));
  }
  return recordings;
}

const modeOf = async (file: string): Promise<number> => (await fs.stat(file)).mode & 0o777;

describe('saving a recording', () => {
  it('writes a private PCM16 WAV file with the samples and indexes it', async () => {
    const f = await fixture();
    const saved = await f.service.save(message());
    expect(saved.id).toMatch(/^rec_[A-Za-z0-9_-]{22}$/);
    expect(saved).toMatchObject({
      callId: 'a84b4c76e66710@pc33.example.ch',
      route: '+41445551234',
      caller: '+41791234567',
      called: '+41445551234',
      language: 'de-CH',
      createdAt: '2026-03-01T08:00:00.000Z',
      durationSeconds: 1,
      sizeBytes: WAV_HEADER_BYTES + 16000,
      sampleRateHz: 8000,
      endedBy: 'silence',
      transcript: { status: 'unavailable', text: null, confidence: null },
      expiresAt: '2026-03-31T08:00:00.000Z',
    });
    const file = path.join(f.folder, `${saved.id}.wav`);
    const bytes = await fs.readFile(file);
    expect(bytes.length).toBe(saved.sizeBytes);
    const info = parseWav(bytes);
    expect(info).toEqual({ encoding: 'pcm', channels: 1, sampleRateHz: 8000, bitsPerSample: 16, dataOffset: WAV_HEADER_BYTES, dataBytes: 16000 });
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset + WAV_HEADER_BYTES, bytes.byteOffset + bytes.length));
    expect(samples).toEqual(message().pcm);
    expect(await modeOf(file)).toBe(0o600);
    expect(await modeOf(f.folder)).toBe(0o700);
    // Nothing but the finished file: the temporary name is gone.
    expect(await fs.readdir(f.folder)).toEqual([`${saved.id}.wav`]);
    const { expiresAt: _expiresAt, ...indexed } = saved;
    expect(await f.store.recordings.findById(saved.id)).toEqual(indexed);
    expect(await f.service.get(saved.id)).toEqual(saved);
  });

  it('keeps 16 kHz messages and empty ones, and refuses rates no call has', async () => {
    const f = await fixture();
    const wide = await f.service.save(message({ pcm: new Int16Array(24000), sampleRateHz: 16000, endedBy: 'max_length' }));
    expect(wide).toMatchObject({ durationSeconds: 1.5, sampleRateHz: 16000, endedBy: 'max_length' });
    expect(parseWav(await fs.readFile(path.join(f.folder, `${wide.id}.wav`))).sampleRateHz).toBe(16000);
    const empty = await f.service.save(message({ pcm: new Int16Array(0), endedBy: 'hangup' }));
    expect(empty).toMatchObject({ durationSeconds: 0, sizeBytes: WAV_HEADER_BYTES });
    await expect(f.service.save(message({ sampleRateHz: 4000 }))).rejects.toThrow(RangeError);
    await expect(f.service.save(message({ sampleRateHz: 8000.5 }))).rejects.toThrow(RangeError);
  });

  it('shows no expiry while retention is 0', async () => {
    const f = await fixture({ config: { retentionDays: 0 } });
    expect((await f.service.save(message())).expiresAt).toBeNull();
  });

  it('refuses new recordings once closed', async () => {
    const f = await fixture();
    await f.service.close();
    await expect(f.service.save(message())).rejects.toThrow(/closed/);
  });
});

describe('listing recordings', () => {
  it('pages newest first, and a page continues after its last recording was deleted', async () => {
    const f = await fixture();
    const ids = (
      await saveAt(f, [
        '2026-03-01T08:00:00.000Z',
        '2026-03-01T09:00:00.000Z',
        '2026-03-01T10:00:00.000Z',
        '2026-03-02T08:00:00.000Z',
        '2026-03-03T08:00:00.000Z',
      ])
    ).map((r) => r.id);
    const newestFirst = [...ids].reverse();
    const first = await f.service.list({ limit: 2 });
    expect(first.recordings.map((r) => r.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.next).toEqual(expect.any(String));
    await f.service.delete(newestFirst[1]!);
    const second = await f.service.list({ limit: 2, before: first.next });
    expect(second.recordings.map((r) => r.id)).toEqual(newestFirst.slice(2, 4));
    const last = await f.service.list({ limit: 2, before: second.next });
    expect(last).toEqual({ recordings: [expect.objectContaining({ id: newestFirst[4] })], next: null });
    expect((await f.service.list({ limit: 100 })).recordings).toHaveLength(4);
    // A page that ends exactly at the last recording has no next.
    expect((await f.service.list({ limit: 4 })).next).toBeNull();
  });

  it('orders recordings of the same millisecond by id, without losing any between pages', async () => {
    const f = await fixture();
    const ids = (await saveAt(f, Array(7).fill('2026-03-01T08:00:00.000Z'))).map((r) => r.id);
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof f.service.list>> = await f.service.list({ limit: 3, before });
      seen.push(...page.recordings.map((r) => r.id));
      before = page.next;
    } while (before);
    expect(seen).toEqual([...ids].sort().reverse());
  });

  it('refuses a cursor it did not make and a limit out of range', async () => {
    const f = await fixture();
    for (const cursor of ['garbage', Buffer.from('2026-03-01T08:00:00.000Z|../../etc/passwd').toString('base64url'), 'x'.repeat(80)]) {
      await expect(f.service.list({ limit: 5, before: cursor }), cursor).rejects.toThrow(InvalidCursorError);
    }
    for (const limit of [0, 101, 2.5]) await expect(f.service.list({ limit }), String(limit)).rejects.toThrow(RangeError);
  });
});

describe('deleting recordings', () => {
  it('removes the file and the entry; unknown and malformed ids are simply absent', async () => {
    const f = await fixture();
    const saved = await f.service.save(message());
    const kept = await f.service.save(message());
    expect(await f.service.delete(saved.id)).toBe(true);
    expect(await f.service.get(saved.id)).toBeNull();
    expect(await f.service.openAudio(saved.id)).toBeNull();
    expect(await f.store.recordings.findById(saved.id)).toBeUndefined();
    expect(await fs.readdir(f.folder)).toEqual([`${kept.id}.wav`]);
    expect(await f.service.delete(saved.id)).toBe(false);
    for (const id of ['rec_nope', '../sprachrohr.sqlite', `${kept.id}/..`, '']) {
      expect(await f.service.get(id), id).toBeNull();
      expect(await f.service.delete(id), id).toBe(false);
    }
    expect(await f.service.get(kept.id)).not.toBeNull();
  });

  it('answers an entry whose file has gone as having no audio', async () => {
    const f = await fixture();
    const saved = await f.service.save(message());
    await fs.rm(path.join(f.folder, `${saved.id}.wav`));
    expect(await f.service.openAudio(saved.id)).toBeNull();
  });
});

describe('retention', () => {
  it('sweeps what is older than the retention at the given moment, files included', async () => {
    const f = await fixture({ config: { retentionDays: 30 } });
    const [old, recent] = (await saveAt(f, ['2026-01-01T00:00:00.000Z', '2026-01-20T00:00:00.000Z'])) as [Recording, Recording];
    expect(old.expiresAt).toBe('2026-01-31T00:00:00.000Z');
    expect(await f.service.sweepExpired(new Date('2026-01-30T23:59:59.999Z'))).toBe(0);
    expect(await f.service.sweepExpired(new Date('2026-01-31T00:00:00.000Z'))).toBe(1);
    expect(await f.service.get(old.id)).toBeNull();
    expect(await fs.readdir(f.folder)).toEqual([`${recent.id}.wav`]);
    expect(await f.service.sweepExpired(new Date('2027-01-01T00:00:00.000Z'))).toBe(1);
    expect(await fs.readdir(f.folder)).toEqual([]);
  });

  it('sweeps a backlog larger than one batch', async () => {
    const f = await fixture({ config: { retentionDays: 1 } });
    for (let i = 0; i < 130; i++) await f.service.save(message({ pcm: new Int16Array(8) }));
    expect(await f.service.sweepExpired(new Date('2026-03-05T00:00:00.000Z'))).toBe(130);
    expect((await f.service.list({ limit: 100 })).recordings).toEqual([]);
  });

  it('keeps everything while retention is 0', async () => {
    const f = await fixture({ config: { retentionDays: 0 } });
    await f.service.save(message());
    expect(await f.service.sweepExpired(new Date('2100-01-01T00:00:00.000Z'))).toBe(0);
    expect((await f.service.list({ limit: 10 })).recordings).toHaveLength(1);
  });

  it('at start: sweeps, removes half-written files a stopped process left, and takes up unfinished transcriptions', async () => {
    const f = await fixture({ config: { retentionDays: 30 } });
    const [expired, fresh] = (await saveAt(f, ['2026-01-01T00:00:00.000Z', '2026-03-01T08:00:00.000Z'])) as [Recording, Recording];
    // What a process that stopped mid-transcription and mid-write leaves behind.
    await f.store.recordings.setTranscript(fresh.id, { status: 'pending', text: null, confidence: null });
    const abandoned = path.join(f.folder, 'rec_AAAAAAAAAAAAAAAAAAAAAA.wav.partial-0a1b2c');
    const inProgress = path.join(f.folder, 'rec_BBBBBBBBBBBBBBBBBBBBBB.wav.partial-3d4e5f');
    await fs.writeFile(abandoned, 'RIFF');
    await fs.writeFile(inProgress, 'RIFF');
    const twoHoursAgo = new Date(Date.parse('2026-03-01T06:00:00.000Z'));
    await fs.utimes(abandoned, twoHoursAgo, twoHoursAgo);
    await fs.utimes(inProgress, new Date('2026-03-01T07:59:00.000Z'), new Date('2026-03-01T07:59:00.000Z'));
    f.service.start();
    await f.service.whenIdle();
    expect(await f.service.get(expired.id)).toBeNull();
    expect((await f.service.get(fresh.id))?.transcript.status).toBe('unavailable');
    expect((await fs.readdir(f.folder)).sort()).toEqual([`${fresh.id}.wav`, path.basename(inProgress)].sort());
    expect(f.logs.some((line) => line.msg === 'expired recordings deleted' && line.deleted === 1)).toBe(true);
  });
});

describe('transcripts', () => {
  it('are unavailable when no recogniser serves the language', async () => {
    const f = await fixture();
    const saved = await f.service.save(message({ language: 'rm-CH' }));
    expect(saved.transcript.status).toBe('unavailable');
    await f.service.whenIdle();
    expect((await f.service.get(saved.id))?.transcript).toEqual({ status: 'unavailable', text: null, confidence: null });
  });

  it('are made in the background by an installed recogniser, telephone audio included', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-recordings-vosk-'));
    await writeTinyVoskModel(path.join(dir, 'models', 'tiny-de'));
    await fs.writeFile(path.join(dir, 'models', 'tiny-de', 'sprachrohr-model.json'), JSON.stringify({ engine: 'vosk', languages: ['de'] }));
    await loadResampler();
    const engines = await startEngines(
      loadConfig({
        SPRACHROHR_TTS_ENGINE: 'none',
        SPRACHROHR_STT_ENGINE: 'none',
        SPRACHROHR_STT_WORKERS: '1',
        SPRACHROHR_MODELS_DIR: path.join(dir, 'models'),
      }),
    );
    try {
      const f = await fixture({ recognisers: engines.live.stt });
      // The tiny model hears every loud stretch as "hello"; silence as nothing.
      const pcm = concatPcm([silencePcm(0.5, 8000), tonePcm(0.6, 8000), silencePcm(0.8, 8000)]);
      const spoken = await f.service.save(message({ pcm, language: 'de-CH' }));
      const silent = await f.service.save(message({ pcm: silencePcm(1, 8000), language: 'de-CH' }));
      expect(spoken.transcript.status).toBe('pending');
      await f.service.whenIdle();
      const heard = (await f.service.get(spoken.id))!.transcript;
      expect(heard).toEqual({ status: 'done', text: 'hello', confidence: expect.any(Number) });
      expect(heard.confidence).toBeGreaterThan(0);
      expect(heard.confidence).toBeLessThanOrEqual(1);
      expect((await f.service.get(silent.id))!.transcript).toEqual({ status: 'done', text: '', confidence: null });
      expect(f.logs.filter((line) => line.msg === 'recording transcribed')).toHaveLength(2);
    } finally {
      await engines.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
