/**
 * Configuration, read from environment variables once at start and validated there.
 * Nothing else in the process reads `process.env`.
 */
import { ConfigError, decimal, integer, text, type Env } from './config-values.js';
import { loadNoticeConfig, NOTICE_CONFIG_VARIABLES, type NoticeConfig } from './entitlements/notice-config.js';
import { CallbackAllowList } from './jobs/callback-target.js';
import type { CreditRates } from './store/store.js';
import { loadOperationsConfig, OPERATIONS_CONFIG_VARIABLES, type OperationsConfig } from './operations/operations-config.js';
import { loadRecordingsConfig, RECORDINGS_CONFIG_VARIABLES, type RecordingsConfig } from './recordings/recordings-config.js';
import { loadTelephonyConfig, TELEPHONY_CONFIG_VARIABLES, type TelephonyConfig } from './telephony/telephony-config.js';

export { ConfigError };
import os from 'node:os';
import path from 'node:path';

/** The validated configuration of one process. */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** Folder of the embedded store and the generated key secret. */
  readonly dataDir: string;
  /** Secret for key fingerprints; generated into `dataDir` when not given (required with {@link databaseUrl}). */
  readonly keySecret: string | null;
  /**
   * The shared PostgreSQL store (`postgres://…`) every instance of a deployment uses; null: the
   * embedded SQLite store in `dataDir`.
   */
  readonly databaseUrl: string | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Public base address including `/v1`, for discovery documents. */
  readonly publicBaseUrl: string | null;
  /** Requests in flight over the whole process before `*.capacity` (service_capacity). */
  readonly maxInFlight: number;
  /** Requests in flight per live key before `*.capacity` (key_capacity). */
  readonly keyMaxInFlight: number;
  /** Requests in flight per sandbox key: the sandbox's own small concurrency slice. */
  readonly sandboxKeyMaxInFlight: number;
  /** Daily audio budget per live key, in audio seconds. */
  readonly dailyAudioSeconds: number;
  /** Daily audio budget per sandbox key, in audio seconds. */
  readonly sandboxDailyAudioSeconds: number;
  /** Time every request body gets to arrive before it is held to {@link bodyMinBytesPerSecond}. */
  readonly bodyTimeoutMs: number;
  /** After {@link bodyTimeoutMs}, the average bytes per second a request body must arrive at. */
  readonly bodyMinBytesPerSecond: number;
  /** After the drain, how long the close waits for in-flight requests before closing them. */
  readonly shutdownGraceMs: number;
  /** The drain at shutdown and the operator endpoints' tokens. */
  readonly operations: OperationsConfig;
  /** Live synthesis engine: `espeak` (embedded) or `none`. */
  readonly ttsEngine: 'espeak' | 'none';
  /** libespeak-ng's file, when it is not in a usual library directory. */
  readonly espeakLibrary: string | undefined;
  /** Worker threads of the embedded synthesis engine. */
  readonly ttsWorkers: number;
  /** Folder of neural voice models for `studio`, or `null` for none. */
  readonly voicesDir: string | null;
  /** Live recognition: `pocketsphinx` (embedded English, used when installed) or `none`. */
  readonly sttEngine: 'pocketsphinx' | 'none';
  /** Worker threads of the embedded recogniser, and of each installed model. */
  readonly sttWorkers: number;
  /** Realtime WebSocket sessions open at once in the process (service_capacity beyond). */
  readonly realtimeMaxSessions: number;
  /** Realtime sessions open at once per live key (key_capacity beyond). */
  readonly realtimeKeyMaxSessions: number;
  /** Realtime sessions open at once per sandbox key. */
  readonly realtimeSandboxKeyMaxSessions: number;
  /** A realtime session that receives no frame for this long is closed. */
  readonly realtimeIdleTimeoutMs: number;
  /** Pings go out this often on a realtime socket; a client that missed the last one is cut off. */
  readonly realtimeHeartbeatMs: number;
  /** New realtime sessions are refused (`host_load`) while the event loop's p99 delay is above this. */
  readonly realtimeMaxLoopDelayMs: number;
  /** Folder of installed recognition models (`sprachrohr models`), one folder per model. */
  readonly modelsDir: string;
  /** An operator's model catalog file laid over the built-in one, or `null`. */
  readonly modelCatalog: string | null;
  /** Folder of pocketsphinx's English model (Debian's `pocketsphinx-en-us` by default). */
  readonly pocketsphinxModelDir: string;
  /** Voicemail recordings: retention and the webhook that announces them. */
  readonly recordings: RecordingsConfig;
  /** Credits one audio second costs per direction, for credit entitlements. */
  readonly creditRates: CreditRates;
  /** The evaluation allowance a new account gets, in audio seconds; 0 for none. */
  readonly evaluationSeconds: number;
  /** Where credit notices go. */
  readonly notices: NoticeConfig;
  /** Addresses job callbacks may go to besides public ones (CIDR list). */
  readonly callbackAllow: readonly string[];
  /** The SIP/RTP side. */
  readonly telephony: TelephonyConfig;
  /**
   * The deployment lexicon `SPRACHROHR_LEXICON_FILE` names; `null`: `lexicon.yaml` (or `.yml`)
   * in the dialplan folder, when there is one.
   */
  readonly lexiconFile: string | null;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads and validates the configuration.
 * @throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: Env = process.env): Config {
  const logLevel = text(env, 'SPRACHROHR_LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('SPRACHROHR_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
  }
  const keySecret = env['SPRACHROHR_KEY_SECRET'] || null;
  if (keySecret !== null && keySecret.length < 32) {
    throw new ConfigError('SPRACHROHR_KEY_SECRET', 'must be at least 32 characters long');
  }
  const databaseUrl = loadDatabaseUrl(env);
  if (databaseUrl !== null && keySecret === null) {
    // A secret generated into one instance's data folder would make the keys others made unusable there.
    throw new ConfigError('SPRACHROHR_KEY_SECRET', 'must be set when SPRACHROHR_DATABASE_URL is: every instance on the database needs the same one');
  }
  const publicBaseUrl = env['SPRACHROHR_PUBLIC_BASE_URL'] || null;
  if (publicBaseUrl !== null && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(publicBaseUrl)) {
    throw new ConfigError('SPRACHROHR_PUBLIC_BASE_URL', `must be an http(s) address, got ${JSON.stringify(publicBaseUrl)}`);
  }
  const cores = os.availableParallelism();
  const ttsEngine = text(env, 'SPRACHROHR_TTS_ENGINE', 'espeak');
  if (ttsEngine !== 'espeak' && ttsEngine !== 'none') {
    throw new ConfigError('SPRACHROHR_TTS_ENGINE', `must be espeak or none, got ${JSON.stringify(ttsEngine)}`);
  }
  const sttEngine = text(env, 'SPRACHROHR_STT_ENGINE', 'pocketsphinx');
  if (sttEngine !== 'pocketsphinx' && sttEngine !== 'none') {
    throw new ConfigError('SPRACHROHR_STT_ENGINE', `must be pocketsphinx or none, got ${JSON.stringify(sttEngine)}`);
  }
  const config: Omit<Config, 'lexiconFile'> = {
    host: text(env, 'SPRACHROHR_HOST', '127.0.0.1'),
    port: integer(env, 'SPRACHROHR_PORT', 8080, 0, 65535),
    dataDir: path.resolve(text(env, 'SPRACHROHR_DATA_DIR', 'data')),
    keySecret,
    databaseUrl,
    logLevel: logLevel as Config['logLevel'],
    publicBaseUrl: publicBaseUrl?.replace(/\/+$/, '') ?? null,
    maxInFlight: integer(env, 'SPRACHROHR_MAX_IN_FLIGHT', cores * 64, 1, 1_000_000),
    keyMaxInFlight: integer(env, 'SPRACHROHR_KEY_MAX_IN_FLIGHT', 32, 1, 1_000_000),
    sandboxKeyMaxInFlight: integer(env, 'SPRACHROHR_SANDBOX_KEY_MAX_IN_FLIGHT', 8, 1, 1_000_000),
    dailyAudioSeconds: integer(env, 'SPRACHROHR_DAILY_AUDIO_SECONDS', 36_000, 1, 1_000_000_000),
    sandboxDailyAudioSeconds: integer(env, 'SPRACHROHR_SANDBOX_DAILY_AUDIO_SECONDS', 7_200, 1, 1_000_000_000),
    bodyTimeoutMs: integer(env, 'SPRACHROHR_BODY_TIMEOUT_MS', 10_000, 100, 600_000),
    bodyMinBytesPerSecond: integer(env, 'SPRACHROHR_BODY_MIN_RATE', 16_384, 1, 1_000_000_000),
    shutdownGraceMs: integer(env, 'SPRACHROHR_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    operations: loadOperationsConfig(env),
    ttsEngine,
    // One core stays with the event loop: with a worker on every core, the operating system
    // takes the event loop off the CPU under load (docs/performance.md, "Measurements behind
    // the code's choices").
    ttsWorkers: integer(env, 'SPRACHROHR_TTS_WORKERS', Math.max(1, cores - 1), 1, 256),
    voicesDir: env['SPRACHROHR_VOICES_DIR'] ? path.resolve(env['SPRACHROHR_VOICES_DIR']) : null,
    espeakLibrary: env['SPRACHROHR_ESPEAK_LIBRARY'] ? path.resolve(env['SPRACHROHR_ESPEAK_LIBRARY']) : undefined,
    sttEngine,
    sttWorkers: integer(env, 'SPRACHROHR_STT_WORKERS', Math.max(1, cores - 1), 1, 256),
    pocketsphinxModelDir: path.resolve(text(env, 'SPRACHROHR_POCKETSPHINX_MODEL', '/usr/share/pocketsphinx/model/en-us')),
    realtimeMaxSessions: integer(env, 'SPRACHROHR_REALTIME_MAX_SESSIONS', 200, 1, 1_000_000),
    realtimeKeyMaxSessions: integer(env, 'SPRACHROHR_REALTIME_KEY_MAX_SESSIONS', 100, 1, 1_000_000),
    realtimeSandboxKeyMaxSessions: integer(env, 'SPRACHROHR_REALTIME_SANDBOX_KEY_MAX_SESSIONS', 10, 1, 1_000_000),
    realtimeIdleTimeoutMs: integer(env, 'SPRACHROHR_REALTIME_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    realtimeHeartbeatMs: integer(env, 'SPRACHROHR_REALTIME_HEARTBEAT_MS', 15_000, 100, 600_000),
    realtimeMaxLoopDelayMs: integer(env, 'SPRACHROHR_REALTIME_MAX_LOOP_DELAY_MS', 100, 10, 60_000),
    modelsDir: path.resolve(env['SPRACHROHR_MODELS_DIR'] || path.join(text(env, 'SPRACHROHR_DATA_DIR', 'data'), 'models')),
    modelCatalog: env['SPRACHROHR_MODEL_CATALOG'] ? path.resolve(env['SPRACHROHR_MODEL_CATALOG']) : null,
    recordings: loadRecordingsConfig(env),
    creditRates: {
      tts: decimal(env, 'SPRACHROHR_CREDITS_PER_TTS_SECOND', 1, 0, 1_000_000),
      stt: decimal(env, 'SPRACHROHR_CREDITS_PER_STT_SECOND', 1, 0, 1_000_000),
    },
    evaluationSeconds: integer(env, 'SPRACHROHR_EVALUATION_SECONDS', 3600, 0, 1_000_000_000),
    notices: loadNoticeConfig(env),
    callbackAllow: callbackAllowList(env),
    telephony: loadTelephonyConfig(env),
  };
  return { ...config, lexiconFile: lexiconFile(env, config.telephony.dialplansDir) };
}

/**
 * `SPRACHROHR_LEXICON_FILE`, resolved. Inside the dialplan folder it must be named lexicon.yaml
 * or lexicon.yml, which the dialplan loader leaves alone; any other name there would be read
 * as a dialplan.
 */
function lexiconFile(env: Env, dialplansDir: string): string | null {
  const value = env['SPRACHROHR_LEXICON_FILE'];
  if (!value) return null;
  const file = path.resolve(value);
  if (path.dirname(file) === dialplansDir && /\.ya?ml$/.test(file) && !['lexicon.yaml', 'lexicon.yml'].includes(path.basename(file)))
    throw new ConfigError(
      'SPRACHROHR_LEXICON_FILE',
      `${file} is in the dialplan folder, where it would be read as a dialplan: name it lexicon.yaml or keep it elsewhere`,
    );
  return file;
}

/** `SPRACHROHR_DATABASE_URL`, checked: a postgres:// or postgresql:// address with a host and a database, or null. */
function loadDatabaseUrl(env: Env): string | null {
  const value = env['SPRACHROHR_DATABASE_URL'] || null;
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('SPRACHROHR_DATABASE_URL', 'must be an address like postgres://user:password@host:5432/database');
  }
  // The value may hold a password: the messages never repeat it.
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('SPRACHROHR_DATABASE_URL', `must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  if (!url.hostname) throw new ConfigError('SPRACHROHR_DATABASE_URL', 'names no host');
  if (url.pathname.length <= 1) throw new ConfigError('SPRACHROHR_DATABASE_URL', 'names no database (the path after the host)');
  const max = url.searchParams.get('max');
  if (max !== null && !(/^\d+$/.test(max) && Number(max) >= 1 && Number(max) <= 1000)) {
    throw new ConfigError('SPRACHROHR_DATABASE_URL', `max (the pool size) must be a whole number from 1 to 1000, got ${JSON.stringify(max)}`);
  }
  return value;
}

/** The variables {@link loadConfig} reads, for `--help` and the README. */
export const CONFIG_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['SPRACHROHR_HOST', 'address to listen on (default 127.0.0.1)'],
  ['SPRACHROHR_PORT', 'HTTP port (default 8080; 0 picks a free port)'],
  ['SPRACHROHR_DATA_DIR', 'folder of the embedded store (default ./data)'],
  ['SPRACHROHR_KEY_SECRET', 'secret for key fingerprints, ≥ 32 characters (default: generated into the data folder; required with a database URL)'],
  ['SPRACHROHR_DATABASE_URL', 'postgres://user:password@host:port/database[?max=N]: the shared PostgreSQL store (default: SQLite in the data folder)'],
  ['SPRACHROHR_LOG_LEVEL', 'fatal|error|warn|info|debug|trace|silent (default info)'],
  ['SPRACHROHR_PUBLIC_BASE_URL', 'public address including /v1, shown in discovery documents'],
  ['SPRACHROHR_MAX_IN_FLIGHT', 'requests in flight per process (default 64 × cores)'],
  ['SPRACHROHR_KEY_MAX_IN_FLIGHT', 'requests in flight per live key (default 32)'],
  ['SPRACHROHR_SANDBOX_KEY_MAX_IN_FLIGHT', 'requests in flight per sandbox key (default 8)'],
  ['SPRACHROHR_DAILY_AUDIO_SECONDS', 'daily audio budget per live key (default 36000)'],
  [
    'SPRACHROHR_CALLBACK_ALLOW',
    "addresses job callbacks, call status events and API-placed calls' bots may go to besides public ones, CIDR list; plain http is allowed to them (default none)",
  ],
  ['SPRACHROHR_EVALUATION_SECONDS', 'evaluation allowance of a new account in audio seconds (default 3600; 0: none)'],
  ['SPRACHROHR_CREDITS_PER_TTS_SECOND', 'credits one second of synthesised audio draws from a credit entitlement (default 1)'],
  ['SPRACHROHR_CREDITS_PER_STT_SECOND', 'credits one second of recognised audio draws from a credit entitlement (default 1)'],
  ['SPRACHROHR_SANDBOX_DAILY_AUDIO_SECONDS', 'daily audio budget per sandbox key (default 7200)'],
  ['SPRACHROHR_BODY_TIMEOUT_MS', 'time every request body gets before it must keep up SPRACHROHR_BODY_MIN_RATE (default 10000)'],
  ['SPRACHROHR_BODY_MIN_RATE', 'bytes per second a request body must average after SPRACHROHR_BODY_TIMEOUT_MS, or it is cut off (default 16384)'],
  ['SPRACHROHR_SHUTDOWN_GRACE_MS', 'after the drain, how long the close waits for requests still in flight (default 10000)'],
  ['SPRACHROHR_TTS_ENGINE', 'live synthesis engine: espeak (embedded, default) or none'],
  ['SPRACHROHR_ESPEAK_LIBRARY', 'libespeak-ng.so.1 when it is not in a usual library directory (Debian: libespeak-ng1)'],
  ['SPRACHROHR_TTS_WORKERS', 'worker threads of the embedded synthesis engine (default: cores - 1, at least 1)'],
  ['SPRACHROHR_VOICES_DIR', 'folder of neural voice models for studio: <voice>/<language>/model.onnx'],
  ['SPRACHROHR_STT_ENGINE', 'live recognition: pocketsphinx (embedded English, used when installed; default) or none'],
  ['SPRACHROHR_STT_WORKERS', 'worker threads of the embedded recogniser (default: cores - 1, at least 1)'],
  ['SPRACHROHR_REALTIME_MAX_SESSIONS', 'realtime WebSocket sessions open at once in the process (default 200)'],
  ['SPRACHROHR_REALTIME_KEY_MAX_SESSIONS', 'realtime sessions open at once per live key (default 100)'],
  ['SPRACHROHR_REALTIME_SANDBOX_KEY_MAX_SESSIONS', 'realtime sessions open at once per sandbox key (default 10)'],
  ['SPRACHROHR_REALTIME_IDLE_TIMEOUT_MS', 'a realtime session without a frame for this long is closed (default 30000)'],
  ['SPRACHROHR_REALTIME_HEARTBEAT_MS', 'ping interval on realtime sockets; a client that missed the last ping is cut off (default 15000)'],
  ['SPRACHROHR_REALTIME_MAX_LOOP_DELAY_MS', 'new realtime sessions are refused (host_load) while the event loop p99 delay exceeds this (default 100)'],
  ['SPRACHROHR_MODELS_DIR', 'folder of installed recognition models, one folder each (default <data folder>/models)'],
  ['SPRACHROHR_MODEL_CATALOG', 'JSON file of downloadable models laid over the built-in catalog (sprachrohr models pull)'],
  ['SPRACHROHR_POCKETSPHINX_MODEL', 'folder of the English pocketsphinx model (default /usr/share/pocketsphinx/model/en-us)'],
  ['SPRACHROHR_LEXICON_FILE', 'deployment lexicon for Swiss German rendering, reloaded when it changes (default: lexicon.yaml in the dialplan folder, if any)'],
  ...OPERATIONS_CONFIG_VARIABLES,
  ...NOTICE_CONFIG_VARIABLES,
  ...RECORDINGS_CONFIG_VARIABLES,
  ...TELEPHONY_CONFIG_VARIABLES,
];

/** Settings of the CLI's API client commands (`tts`, `stt`). */
export interface ClientConfig {
  /** Base address including `/v1`. */
  readonly baseUrl: string;
  readonly apiKey: string | null;
}

/** Reads the client settings: `SPRACHROHR_URL` and `SPRACHROHR_API_KEY`. */
export function loadClientConfig(env: Env = process.env): ClientConfig {
  const port = integer(env, 'SPRACHROHR_PORT', 8080, 1, 65535);
  const baseUrl = text(env, 'SPRACHROHR_URL', `http://127.0.0.1:${port}/v1`).replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(baseUrl)) throw new ConfigError('SPRACHROHR_URL', `must be an http(s) address, got ${JSON.stringify(baseUrl)}`);
  return { baseUrl, apiKey: env['SPRACHROHR_API_KEY'] || null };
}

/** `SPRACHROHR_CALLBACK_ALLOW`, checked: every entry an address or a CIDR range. */
function callbackAllowList(env: Env): string[] {
  const entries = text(env, 'SPRACHROHR_CALLBACK_ALLOW', '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    new CallbackAllowList(entries);
  } catch (error) {
    throw new ConfigError('SPRACHROHR_CALLBACK_ALLOW', (error as Error).message);
  }
  return entries;
}
