/** Settings of the operations side: the drain at shutdown, and the tokens of the operator endpoints. */
import { ConfigError, integer, type Env } from '../config-values.js';

/** The validated operations settings. */
export interface OperationsConfig {
  /** Longest wait, from the drain's start, for calls, realtime sessions and requests to finish. */
  readonly drainTimeoutMs: number;
  /** Bearer token `GET /metrics` requires; null: the metrics are open to whoever reaches the port. */
  readonly metricsToken: string | null;
  /** Bearer token `POST /v1/admin/drain` requires; null: the endpoint is off. */
  readonly adminToken: string | null;
}

/** Shortest token accepted: a guessable token protects nothing. */
const MIN_TOKEN_LENGTH = 16;

/**
 * Reads the operations settings.
 * @throws ConfigError naming the first bad variable
 */
export function loadOperationsConfig(env: Env): OperationsConfig {
  return {
    // Below the 30 s most orchestrators allow between SIGTERM and SIGKILL, with room to close.
    drainTimeoutMs: integer(env, 'SPRACHROHR_DRAIN_TIMEOUT_MS', 25_000, 0, 86_400_000),
    metricsToken: token(env, 'SPRACHROHR_METRICS_TOKEN'),
    adminToken: token(env, 'SPRACHROHR_ADMIN_TOKEN'),
  };
}

function token(env: Env, name: string): string | null {
  const value = env[name];
  if (value === undefined || value === '') return null;
  if (/\s/.test(value)) throw new ConfigError(name, 'must not contain spaces (it is sent as Authorization: Bearer <token>)');
  if (value.length < MIN_TOKEN_LENGTH) throw new ConfigError(name, `must be at least ${MIN_TOKEN_LENGTH} characters long`);
  return value;
}

/** The variables {@link loadOperationsConfig} reads, for `--help`. */
export const OPERATIONS_CONFIG_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  [
    'SPRACHROHR_DRAIN_TIMEOUT_MS',
    'on SIGTERM or POST /v1/admin/drain: longest wait for calls, realtime sessions and requests before they are ended (default 25000)',
  ],
  ['SPRACHROHR_METRICS_TOKEN', 'bearer token GET /metrics requires, ≥ 16 characters (default: none, metrics open)'],
  ['SPRACHROHR_ADMIN_TOKEN', 'bearer token POST /v1/admin/drain requires, ≥ 16 characters (default: none, the endpoint is off)'],
];
