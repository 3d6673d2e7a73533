import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createEngineRegistry, InstalledModelError, VoiceModelError, type EngineRegistry } from '../engine/registry.js';
import { loadMp3Encoder } from './audio/mp3-encoder.js';
import { loadResampler } from './audio/resampler.js';
import { loadKeySecret } from './auth/key-secret.js';
import { AccountService } from './auth/account-service.js';
import { KeyService } from './auth/key-service.js';
import { LANGUAGES } from './catalog/languages.js';
import { VOICES } from './catalog/voices.js';
import { SANDBOX_CHARACTERS_PER_SECOND } from './catalog/limits.js';
import { importBlobFiles } from './store/blob-import.js';
import { TelephonyService } from './telephony/telephony-service.js';
import { ConfigError, type Config } from './config.js';
import { Admission, httpLimits, realtimeLimits } from './api/admission.js';
import { buildApp } from './app.js';
import type { AppServices } from './api/services.js';
import { EntitlementService } from './entitlements/entitlement-service.js';
import { NoticeMailer } from './entitlements/notice-mailer.js';
import { CallbackSender } from './jobs/callback-sender.js';
import { CallbackAllowList } from './jobs/callback-target.js';
import { JobRunner } from './jobs/job-runner.js';
import { JobService } from './jobs/job-service.js';
import { CallMeter } from './metering/call-meter.js';
import { Drain, DRAIN_RETRY_AFTER_S, type RunningWork } from './operations/drain.js';
import { Readiness } from './operations/readiness.js';
import { ServiceMetrics } from './operations/service-metrics.js';
import { UsageMeter } from './metering/usage-meter.js';
import { RECORDINGS_FOLDER, RecordingService } from './recordings/recording-service.js';
import { warmSynthesis } from './speech/warm-up.js';
import { LexiconFile } from './speech/lexicon-file.js';
import { loadLexicon } from './speech/lexicon-loader.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';
import { TelephonyLink } from './api/telephony-link.js';
import { CallStatusSender } from './telephony/outbound/call-status-events.js';
import { orderUrlCheck } from './telephony/outbound/order-url-check.js';

/** The folder, in the data folder, of the jobs' results. */
const JOBS_FOLDER = 'jobs';

/**
 * Opens the configured store (PostgreSQL or the data folder's SQLite) and the key service on it
 * (shared by server and CLI).
 * @throws StoreUnavailableError when the database cannot be reached or migrated
 */
export async function openKeyStore(config: Config): Promise<{ store: Store; keys: KeyService; accounts: AccountService; entitlements: EntitlementService }> {
  const store = await openStore(config);
  const keys = new KeyService(store.keys, loadKeySecret(config.keySecret, config.dataDir));
  return { store, keys, accounts: new AccountService(store.accounts), entitlements: new EntitlementService(store.entitlements) };
}

/**
 * Starts and warms the engines the configuration names.
 * @throws ConfigError naming SPRACHROHR_VOICES_DIR when a neural voice does not load, or
 *   SPRACHROHR_MODELS_DIR when an installed recognition model does not.
 */
export async function startEngines(config: Config): Promise<EngineRegistry> {
  try {
    return await createEngineRegistry({
      languages: LANGUAGES.map((l) => l.code),
      voices: VOICES.map((v) => v.id),
      voicesDir: config.voicesDir,
      sandboxCharactersPerSecond: SANDBOX_CHARACTERS_PER_SECOND,
      ttsEngine: config.ttsEngine,
      ttsWorkers: config.ttsWorkers,
      ...(config.espeakLibrary ? { espeakLibrary: config.espeakLibrary } : {}),
      sttEngine: config.sttEngine,
      sttWorkers: config.sttWorkers,
      pocketsphinxModelDir: config.pocketsphinxModelDir,
      modelsDir: config.modelsDir,
    });
  } catch (error) {
    if (error instanceof VoiceModelError) throw new ConfigError('SPRACHROHR_VOICES_DIR', error.message);
    if (error instanceof InstalledModelError) throw new ConfigError('SPRACHROHR_MODELS_DIR', error.message);
    throw error;
  }
}

/**
 * Builds the services the HTTP API runs on, over an opened store and started engines. Their
 * owner starts the recordings' upkeep (`services.recordings.start()`) and the job runner
 * (`services.jobs.runner.start()`), and closes them before the engines and the store.
 */
export function createServices(
  config: Config,
  logger: Logger,
  store: Store,
  keys: KeyService,
  engines: EngineRegistry,
  /** The address the API listens at, once it does: the base of the audio url in job callbacks without `SPRACHROHR_PUBLIC_BASE_URL`. */
  listening: () => string = () => `http://${config.host}:${config.port}`,
): AppServices {
  const notices = new NoticeMailer(config.notices, store.accounts, logger.child({ part: 'notices' }));
  const meter = new UsageMeter({
    usage: store.usage,
    entitlements: store.entitlements,
    budgets: { live: config.dailyAudioSeconds, sandbox: config.sandboxDailyAudioSeconds },
    rates: config.creditRates,
    onNotices: (due) => notices.notify(due),
    claims: store.budgetClaims,
  });
  const allow = new CallbackAllowList(config.callbackAllow);
  const callbacks = new CallbackSender({
    jobs: store.jobs,
    accounts: store.accounts,
    allow,
    baseUrl: () => config.publicBaseUrl ?? `${listening()}/v1`,
    logger: logger.child({ part: 'job-callbacks' }),
  });
  const metrics = new ServiceMetrics();
  const drain = new Drain();
  const runner = new JobRunner({
    jobs: store.jobs,
    engines,
    meter,
    callbacks,
    onState: (state) => metrics.jobState(state),
    blobs: store.blobs('jobs', path.join(config.dataDir, JOBS_FOLDER)),
    logger: logger.child({ part: 'jobs' }),
  });
  return {
    config,
    logger,
    keys,
    engines,
    notices,
    meter,
    jobs: new JobService(store.jobs, engines, runner, { allow }),
    telephony: new TelephonyLink(),
    admission: new Admission(httpLimits(config), store.limits, 'http'),
    realtimeAdmission: new Admission(realtimeLimits(config), store.limits, 'realtime'),
    stats: { syntheses: 0 },
    drain,
    // A read by a key id no key has: one indexed lookup, whatever the store.
    readiness: new Readiness(drain, () => store.keys.findById('key_readiness_probe'), logger.child({ part: 'readiness' })),
    metrics,
    recordings: new RecordingService({
      audio: store.blobs('recordings', path.join(config.dataDir, RECORDINGS_FOLDER)),
      repository: store.recordings,
      recognisers: engines.live.stt,
      config: config.recordings,
      logger: logger.child({ part: 'recordings' }),
    }),
  };
}

/** A running service and the way to stop it. */
export interface RunningServer {
  readonly app: FastifyInstance;
  /** The address it listens on, for example `http://127.0.0.1:8080`. */
  readonly address: string;
  /** The phone side, unless `SPRACHROHR_SIP=off`. */
  readonly telephony: TelephonyService | null;
  /** Refuses new work from its start, and says why the instance is not ready. */
  readonly drain: Drain;
  /**
   * Waits, once the drain has begun, for calls, realtime sessions and API requests to finish,
   * up to `SPRACHROHR_DRAIN_TIMEOUT_MS` from the drain's start (or until `drain.endWait()`).
   * @returns what was still running at the deadline (empty when everything finished)
   */
  drained(): Promise<RunningWork>;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), ends calls, closes the store. */
  close(): Promise<void>;
}

/**
 * On a database store, the recordings and job files an instance kept in its data folder before
 * (with the embedded store) are moved into the database, where every instance finds them.
 */
async function importDataFolderBlobs(config: Config, store: Store, logger: Logger): Promise<void> {
  for (const [area, folder] of [
    ['recordings', RECORDINGS_FOLDER],
    ['jobs', JOBS_FOLDER],
  ] as const) {
    const from = path.join(config.dataDir, folder);
    const moved = await importBlobFiles(from, store.blobs(area, from));
    if (moved > 0) logger.info({ area, moved, from }, `moved ${moved} ${area} files from the data folder into the database`);
  }
}

/** Builds every part of the service, warms what is slow to start, and listens. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  // A bad lexicon stops the start with its FILE:LINE:COLUMN before anything is opened.
  const lexiconAt = { file: config.lexiconFile, directory: config.telephony.dialplansDir };
  const lexicon = await loadLexicon(lexiconAt);
  const { store, keys } = await openKeyStore(config);
  if (config.databaseUrl) await importDataFolderBlobs(config, store, logger);
  await Promise.all([loadMp3Encoder(), loadResampler()]);
  const engines = await startEngines(config);
  // Every synthesis (HTTP, realtime, jobs, calls) renders through the registry's one renderer.
  const lexiconFile = LexiconFile.follow(lexiconAt, engines.dialect, logger.child({ part: 'lexicon' }), lexicon);
  lexiconFile.watch();
  await warmSynthesis({ engine: engines.live.tts ?? engines.sandbox.tts, dialect: engines.dialect });
  const recognition = engines.live.stt;
  logger.info({ engines: recognition.engines.map((engine) => engine.id), languages: recognition.languages }, 'live recognition');
  for (const reason of recognition.unavailable) logger.warn({ reason }, 'a recogniser is not available; its languages are absent from capabilities');
  let listeningAt = `http://${config.host}:${config.port}`;
  const services = createServices(config, logger, store, keys, engines, () => listeningAt);
  const app = await buildApp(services);
  const address = await app.listen({ host: config.host, port: config.port });
  listeningAt = address;
  let telephony: TelephonyService | null = null;
  const callbackAllow = new CallbackAllowList(config.callbackAllow);
  const accountSecret = async (accountId: string): Promise<string | null> => (await store.accounts.findById(accountId))?.webhookSecret ?? null;
  const callStatus = new CallStatusSender({
    allow: callbackAllow,
    secretOf: accountSecret,
    logger: logger.child({ part: 'call-status' }),
  });
  const callMeter = new CallMeter({
    accounts: store.accounts,
    entitlements: store.entitlements,
    usage: store.usage,
    rates: config.creditRates,
    onNotices: (due) => services.notices.notify(due),
  });
  try {
    telephony = config.telephony.enabled
      ? await TelephonyService.start(config.telephony, engines, logger.child({ part: 'sip' }), {
          recordings: services.recordings,
          webhookSecret: config.recordings.secret,
          metering: callMeter,
          outbound: { status: callStatus, checkUrl: orderUrlCheck(callbackAllow), accountSecret, counters: store.limits },
          observer: services.metrics,
        })
      : null;
  } catch (error) {
    await lexiconFile.close();
    await app.close();
    services.metrics.close();
    await services.recordings.close();
    await services.notices.close();
    await engines.close();
    await store.close();
    throw error;
  }
  if (telephony) {
    const phone = telephony;
    services.telephony.attach({ sip: phone.signallingKind, trunks: () => phone.trunkStatus(), dialer: phone.dialer });
    services.metrics.state.attach({ activeCalls: () => phone.activeCalls, pacer: () => phone.pacingStats() });
    services.drain.onStart(() => phone.drain(DRAIN_RETRY_AFTER_S));
  }
  services.metrics.state.attach({ jobsRunning: () => services.jobs.runner.runningJobs });
  services.drain.onStart((start) => logger.warn({ reason: start.reason, timeoutMs: config.operations.drainTimeoutMs }, 'draining: new work is refused'));
  services.recordings.start();
  await services.jobs.runner.start();
  services.readiness.markStarted();
  let closing: Promise<void> | undefined;
  const running = (): RunningWork => ({
    calls: telephony?.activeCalls ?? 0,
    // Calls ordered through the API, ringing ones included (answered ones are among `calls` too).
    orderedCalls: telephony?.dialer.size ?? 0,
    realtimeSessions: services.realtimeAdmission.snapshot().in_flight,
    requests: services.drain.requestsInFlight,
  });
  return {
    app,
    address,
    telephony,
    drain: services.drain,
    async drained() {
      const left = await services.drain.waitForIdle(running, config.operations.drainTimeoutMs, (still) =>
        logger.info({ running: still }, 'draining: waiting for work to finish'),
      );
      if (Object.keys(left).length > 0) logger.warn({ running: left }, 'drain deadline reached: ending what still runs');
      else logger.info('drained: nothing runs any more');
      return left;
    },
    close() {
      closing ??= (async () => {
        const timer = setTimeout(() => {
          logger.warn({ graceMs: config.shutdownGraceMs }, 'grace period over: closing remaining connections');
          app.server.closeAllConnections();
        }, config.shutdownGraceMs);
        try {
          await lexiconFile.close();
          await telephony?.close();
          await callStatus.stop();
          await app.close();
        } finally {
          clearTimeout(timer);
          // After the calls (which save recordings) and before the recognisers and the store it uses.
          await services.recordings.close();
          await services.jobs.runner.stop();
          // The ledger writes still being tried (the store failed them) get their time before
          // the store closes, and their credit notices before the mailer does.
          await Promise.all([services.meter.settled(), callMeter.settled()]);
          await services.notices.close();
          services.metrics.close();
          await engines.close();
          await store.close();
        }
      })();
      return closing;
    },
  };
}
