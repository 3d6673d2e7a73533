/**
 * The job queue across restarts and time, on a store file: a queued job runs after a restart; a
 * job that was running when the process died runs again and is billed once; a failing job is
 * failed with its code; results are removed 48 hours after their job finished, and then the
 * audio endpoint's check says so. A recording that cannot be removed leaves its job succeeded and
 * the queue running; a job the store refuses leaves no recording behind.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineRegistry } from '../../engine/registry.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { loadResampler } from '../../src/audio/resampler.js';
import type { Principal } from '../../src/auth/authenticate.js';
import { loadConfig } from '../../src/config.js';
import { CallbackAllowList } from '../../src/jobs/callback-target.js';
import { JobRunner, resultName } from '../../src/jobs/job-runner.js';
import { JobService } from '../../src/jobs/job-service.js';
import { UsageMeter } from '../../src/metering/usage-meter.js';
import { startEngines } from '../../src/server.js';
import { planSynthesis } from '../../src/speech/synthesis-request.js';
import { synthesizeBatch } from '../../src/speech/synthesis-service.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';
import { FileBlobStore } from '../../src/store/file-blob-store.js';
import { toneWav } from '../helpers/audio-fixtures.js';

/** Blobs on disk whose removal fails, as a shared store's would while its database is away. */
class UnremovableBlobs extends FileBlobStore {
  override remove(): Promise<void> {
    return Promise.reject(new Error('the database is away'));
  }
}

let dir: string;
let engines: EngineRegistry;
const sandbox: Principal = { keyId: 'key_s', accountId: DEFAULT_ACCOUNT_ID, environment: 'sandbox', keyStatus: null };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-job-runner-'));
  await Promise.all([loadMp3Encoder(), loadResampler()]);
  engines = await startEngines(loadConfig({ SPRACHROHR_TTS_ENGINE: 'none', SPRACHROHR_STT_ENGINE: 'none' }));
});
afterAll(async () => {
  await engines.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** A process's job side over the store file: what `createServices` builds. */
function open(now: () => Date = () => new Date(), blobs = new FileBlobStore(path.join(dir, 'jobs')), onState?: (state: string) => void) {
  const store = SqliteStore.open(path.join(dir, 'store.sqlite'));
  const meter = new UsageMeter({
    usage: store.usage,
    entitlements: store.entitlements,
    budgets: { live: 36_000, sandbox: 7_200 },
    rates: { tts: 1, stt: 1 },
    now,
  });
  const runner = new JobRunner({ jobs: store.jobs, engines, meter, blobs, logger: pino({ level: 'silent' }), now, ...(onState ? { onState } : {}) });
  return { store, runner, service: new JobService(store.jobs, engines, runner, { allow: new CallbackAllowList([]) }, now) };
}

describe('the job queue', () => {
  it('runs queued jobs after a restart, and a job cut off by a crash again, billed once', async () => {
    const before = open();
    const queued = await before.service.submit(sandbox, { kind: 'tts', text: 'Die Warteschlange überlebt den Neustart.', format: 'mp3' });
    const crashed = await before.service.submit(sandbox, { kind: 'tts', text: 'Dieser Auftrag lief beim Absturz.', format: 'pcm16' });
    // The process died while the first ran, after its result was billed: claimed, and in the ledger.
    const claimed = await before.store.jobs.claim(new Date().toISOString());
    expect(claimed?.id).toBe(queued.id);
    await before.store.usage.record(
      {
        requestId: queued.id,
        accountId: DEFAULT_ACCOUNT_ID,
        keyId: 'key_s',
        environment: 'sandbox',
        direction: 'tts',
        mode: 'batch',
        recordedAt: new Date().toISOString(),
        audioSeconds: 2.5,
      },
      { tts: 1, stt: 1 },
    );
    await before.store.close();

    const after = open();
    await after.runner.start();
    await after.runner.idle();
    for (const id of [queued.id, crashed.id]) {
      const job = await after.service.get(sandbox, id);
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      const { bytes } = await after.service.audio(sandbox, id);
      expect(bytes.length).toBe(job.audio!.byteLength);
      expect(await after.store.usage.findByRequestId(id)).toBeDefined();
    }
    expect((await after.service.get(sandbox, queued.id)).attempts).toBe(2);
    // Billed once: the entry of the first run stays, the second run's is not added.
    expect((await after.store.usage.findByRequestId(queued.id))!.audioSeconds).toBe(2.5);
    const day = new Date().toISOString().slice(0, 10);
    expect((await after.store.usage.dayTotals('key_s', day, 'tts')).requests).toBe(2);
    await after.runner.stop();
    await after.store.close();
  });

  it('fails a job whose engine is gone, with its code', async () => {
    const side = open();
    await side.runner.start();
    const live: Principal = { ...sandbox, keyId: 'key_l', environment: 'live' };
    // Submitted while a live engine ran (the check at submission passed); by the time it runs there is none.
    await side.store.jobs.insert({
      id: 'job_orphan',
      accountId: DEFAULT_ACCOUNT_ID,
      keyId: 'key_l',
      environment: 'live',
      kind: 'tts',
      status: 'queued',
      request: JSON.stringify({ text: 'Niemand spricht.' }),
      createdAt: new Date().toISOString(),
      startedAt: null,
      finishedAt: null,
      audio: null,
      resultExpiresAt: null,
      purgedAt: null,
      error: null,
      attempts: 0,
      callbackUrl: null,
      callback: { deliveredAt: null, attempts: 0, error: null },
      transcript: null,
    });
    side.runner.wake();
    await side.runner.idle();
    const failed = await side.service.get(live, 'job_orphan');
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'tts.unavailable' }, audio: null });
    await expect(side.service.audio(live, 'job_orphan')).rejects.toMatchObject({ code: 'tts.invalid_request' });
    expect(await side.store.usage.findByRequestId('job_orphan')).toBeUndefined();
    await side.runner.stop();
    await side.store.close();
  });

  it('keeps a recognition job succeeded when its recording cannot be removed, and the queue running', async () => {
    const states: string[] = [];
    const side = open(undefined, new UnremovableBlobs(path.join(dir, 'jobs-unremovable')), (state) => states.push(state));
    await side.runner.start();
    const first = await side.service.submitRecognition(sandbox, toneWav(1), { lang: 'de-CH' });
    await side.runner.idle();
    expect((await side.service.get(sandbox, first.id)).status).toBe('succeeded');
    expect(states.filter((state) => state === 'failed')).toEqual([]);
    // The queue goes on with the next job.
    const second = await side.service.submit(sandbox, { kind: 'tts', text: 'Die Warteschlange läuft weiter.' });
    await side.runner.idle();
    expect((await side.service.get(sandbox, second.id)).status).toBe('succeeded');
    await side.runner.stop();
    await side.store.close();
  });

  it('removes the recording of a recognition job the store refused', async () => {
    const side = open();
    const jobs = side.store.jobs as unknown as { insert: (job: unknown) => Promise<void> };
    jobs.insert = () => Promise.reject(new Error('the database is away'));
    await expect(side.service.submitRecognition(sandbox, toneWav(1), { lang: 'de-CH' })).rejects.toThrow('the database is away');
    const left = await fs.readdir(path.join(dir, 'jobs')).catch(() => [] as string[]);
    expect(left.filter((name) => name.includes('upload'))).toEqual([]);
    await side.store.close();
  });

  it('removes results 48 hours after their job finished', async () => {
    const today = open();
    await today.runner.start();
    const job = await today.service.submit(sandbox, { kind: 'tts', text: 'Bald weg.' });
    await today.runner.idle();
    const file = path.join(dir, 'jobs', resultName(job.id));
    await fs.access(file);
    await today.runner.stop();
    await today.store.close();

    const later = open(() => new Date(Date.now() + 48 * 3600 * 1000 + 60_000));
    expect(await later.runner.purge()).toBeGreaterThanOrEqual(1);
    await expect(fs.access(file)).rejects.toThrow();
    const error = await later.service.audio(sandbox, job.id).catch((caught: unknown) => caught as { code: string; detail: string });
    expect(error).toMatchObject({ code: 'tts.invalid_request' });
    expect((error as { detail: string }).detail).toMatch(/expired/);
    expect((await later.service.get(sandbox, job.id)).status).toBe('succeeded');
    await later.store.close();
  });

  it('speaks a live job of many sentences sentence by sentence into one file as long as the whole text synthesised at once', async () => {
    const live = await startEngines(loadConfig({ SPRACHROHR_STT_ENGINE: 'none', SPRACHROHR_TTS_WORKERS: '1' }));
    try {
      const store = SqliteStore.open(':memory:');
      const meter = new UsageMeter({
        usage: store.usage,
        entitlements: store.entitlements,
        budgets: { live: 36_000, sandbox: 7_200 },
        rates: { tts: 1, stt: 1 },
      });
      const runner = new JobRunner({
        jobs: store.jobs,
        engines: live,
        meter,
        blobs: new FileBlobStore(path.join(dir, 'live-jobs')),
        logger: pino({ level: 'silent' }),
      });
      const service = new JobService(store.jobs, live, runner, { allow: new CallbackAllowList([]) });
      await runner.start();
      const text = 'Guten Tag. Ihre Bestellung ist eingetroffen. Sie können sie ab Montag abholen. Vielen Dank und auf Wiederhören.';
      const principal: Principal = { keyId: 'key_live', accountId: DEFAULT_ACCOUNT_ID, environment: 'live', keyStatus: null };
      const job = await service.submit(principal, { kind: 'tts', text, format: 'pcm16' });
      await runner.idle();
      const done = await service.get(principal, job.id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const { bytes } = await service.audio(principal, job.id);
      expect(bytes.length / 2 / done.audio!.sampleRateHz).toBeCloseTo(done.audio!.seconds, 2);
      const whole = await synthesizeBatch(
        { engine: live.live.tts!, dialect: live.dialect },
        planSynthesis({ text, format: 'pcm16' }, false),
        new AbortController().signal,
      );
      expect(Math.abs(done.audio!.seconds - whole.durationSeconds) / whole.durationSeconds).toBeLessThan(0.1);
      await runner.stop();
      await store.close();
    } finally {
      await live.close();
    }
  }, 60_000);
});
