import type { FastifyInstance } from 'fastify';
import { capturedLogger } from './captured-logger.js';
import { checkResponses } from './response-check.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { KeyService } from '../../src/auth/key-service.js';
import { loadConfig, type Config } from '../../src/config.js';
import { Admission, httpLimits, realtimeLimits } from '../../src/api/admission.js';
import { buildApp } from '../../src/app.js';
import type { AppServices } from '../../src/api/services.js';
import { createServices, startEngines } from '../../src/server.js';
import { LocalLimitCounters } from '../../src/store/limit-counters.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

/** An app on a throwaway in-memory store, with one key per environment, and its log lines. */
export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: AppServices;
  readonly store: SqliteStore;
  readonly sandboxKey: string;
  readonly liveKey: string;
  readonly logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Builds the real app (real store, real engines) with configuration overrides. */
export async function createTestApp(env: Record<string, string> = {}, options: { ready?: boolean; realRateLimit?: boolean } = {}): Promise<TestApp> {
  // Without live engines unless a test asks for them: eSpeak's warm-up takes seconds per app.
  const config: Config = loadConfig({
    SPRACHROHR_KEY_SECRET: 'test-secret-test-secret-test-secret!',
    SPRACHROHR_DATA_DIR: '/nonexistent',
    SPRACHROHR_TTS_ENGINE: 'none',
    SPRACHROHR_TTS_WORKERS: '1',
    SPRACHROHR_STT_ENGINE: 'none',
    SPRACHROHR_STT_WORKERS: '1',
    // A busy test machine can delay the event loop for moments: realtime sessions are refused
    // for host load only where a test is about that (it sets its own threshold).
    SPRACHROHR_REALTIME_MAX_LOOP_DELAY_MS: '5000',
    ...env,
  });
  const { logger, logs } = capturedLogger();
  const store = SqliteStore.open(':memory:');
  const keys = new KeyService(store.keys, config.keySecret!);
  await Promise.all([loadMp3Encoder(), loadResampler()]);
  const engines = await startEngines(config);
  const services: AppServices = {
    ...createServices(config, logger, store, keys, engines),
    // Unless a test is about the rate limit, each request sees a clock one second later, so
    // that the token bucket never runs dry across the many requests of a test file. A test
    // about it gets a clock that stands still: the bucket does not refill while a slow machine
    // sends the burst, so its counts are exact.
    admission: new Admission(httpLimits(config), new LocalLimitCounters(options.realRateLimit ? frozenClock() : steppingClock()), 'http'),
    realtimeAdmission: new Admission(realtimeLimits(config), new LocalLimitCounters(options.realRateLimit ? frozenClock() : steppingClock()), 'realtime'),
  };
  const app = await buildApp(services);
  const violations = checkResponses(app);
  if (options.ready !== false) await app.ready();
  const sandboxKey = (await keys.create('sandbox test', 'sandbox')).key;
  const liveKey = (await keys.create('live test', 'live')).key;
  return {
    app,
    services,
    store,
    sandboxKey,
    liveKey,
    logs,
    async close() {
      await app.close();
      // Every JSON answer matched the schema the OpenAPI document publishes for it.
      if (violations.length > 0) throw new Error(`answers that do not match their OpenAPI schema:\n${violations.join('\n')}`);
      await services.jobs.runner.stop();
      await services.notices.close();
      services.metrics.close();
      await engines.close();
      await store.close();
    },
  };
}

function frozenClock(): () => number {
  const now = performance.now();
  return () => now;
}

function steppingClock(): () => number {
  let now = 0;
  return () => (now += 1000);
}
