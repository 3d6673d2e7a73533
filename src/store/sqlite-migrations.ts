/** The embedded store's schema, as the migrations that build it. */

/** Schema migrations, applied in order; the index + 1 is the `user_version` after each. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     fingerprint TEXT NOT NULL UNIQUE,
     display_prefix TEXT NOT NULL,
     created_at TEXT NOT NULL,
     revoked_at TEXT,
     expires_at TEXT,
     replaced_by TEXT
   );
   CREATE TABLE usage_daily (
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL,
     day TEXT NOT NULL,
     direction TEXT NOT NULL,
     mode TEXT NOT NULL,
     requests INTEGER NOT NULL,
     audio_seconds REAL NOT NULL,
     PRIMARY KEY (key_id, day, direction, mode)
   );`,
  // Voicemails: the index of the WAV files in <data folder>/recordings, newest first by (created_at, id).
  `CREATE TABLE recordings (
     id TEXT PRIMARY KEY,
     call_id TEXT NOT NULL,
     route TEXT NOT NULL,
     caller TEXT NOT NULL,
     called TEXT NOT NULL,
     language TEXT NOT NULL,
     created_at TEXT NOT NULL,
     duration_seconds REAL NOT NULL,
     size_bytes INTEGER NOT NULL,
     sample_rate_hz INTEGER NOT NULL,
     ended_by TEXT NOT NULL CHECK (ended_by IN ('silence', 'key', 'max_length', 'hangup')),
     transcript_status TEXT NOT NULL CHECK (transcript_status IN ('pending', 'done', 'unavailable', 'failed')),
     transcript_text TEXT,
     transcript_confidence REAL
   );
   CREATE INDEX recordings_by_age ON recordings (created_at, id);`,
  // Accounts: every key belongs to one; the keys there were go to the default account.
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     webhook_secret TEXT NOT NULL,
     emails TEXT NOT NULL DEFAULT '[]'
   );
   INSERT INTO accounts (id, name, created_at, webhook_secret)
     VALUES ('acct_default', 'default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), lower(hex(randomblob(32))));
   ALTER TABLE api_keys ADD COLUMN account_id TEXT NOT NULL DEFAULT 'acct_default';
   CREATE INDEX api_keys_by_account ON api_keys (account_id);`,
  // The ledger: one entry per finished request, job, session or call, unique by request id;
  // usage_daily stays as each key's day totals beside it (the budget check reads those on
  // every request). What usage_daily held before becomes one entry per key, day, direction and mode.
  `CREATE TABLE usage_ledger (
     request_id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     direction TEXT NOT NULL CHECK (direction IN ('tts', 'stt')),
     mode TEXT NOT NULL CHECK (mode IN ('batch', 'realtime')),
     recorded_at TEXT NOT NULL,
     requests INTEGER NOT NULL DEFAULT 1,
     audio_seconds REAL NOT NULL
   );
   CREATE INDEX usage_ledger_by_account ON usage_ledger (account_id, recorded_at);
   INSERT INTO usage_ledger (request_id, account_id, key_id, environment, direction, mode, recorded_at, requests, audio_seconds)
     SELECT 'before_ledger_' || key_id || '_' || day || '_' || direction || '_' || mode,
            COALESCE((SELECT account_id FROM api_keys WHERE api_keys.id = usage_daily.key_id), 'acct_default'),
            key_id, environment, direction, mode, day || 'T00:00:00.000Z', requests, audio_seconds
     FROM usage_daily;`,
  // Entitlements of accounts, and which ledger entry drew how much from which (units: seconds,
  // or credits for kind credit).
  `CREATE TABLE entitlements (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     account_id TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('evaluation', 'committed', 'credit')),
     direction TEXT NOT NULL CHECK (direction IN ('tts', 'stt', 'any')),
     granted_seconds REAL,
     granted_credits REAL,
     used REAL NOT NULL DEFAULT 0,
     valid_until TEXT,
     enforcement TEXT NOT NULL CHECK (enforcement IN ('hard', 'soft')),
     created_at TEXT NOT NULL,
     removed_at TEXT,
     notices_sent TEXT NOT NULL DEFAULT '[]'
   );
   CREATE INDEX entitlements_by_account ON entitlements (account_id);
   CREATE TABLE entitlement_draws (
     request_id TEXT NOT NULL,
     entitlement_id INTEGER NOT NULL,
     amount REAL NOT NULL,
     PRIMARY KEY (request_id, entitlement_id)
   );`,
  // Asynchronous synthesis jobs: the queue (oldest queued first), each account's newest first.
  `CREATE TABLE jobs (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     kind TEXT NOT NULL CHECK (kind IN ('tts')),
     status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
     request TEXT NOT NULL,
     created_at TEXT NOT NULL,
     started_at TEXT,
     finished_at TEXT,
     audio TEXT,
     result_expires_at TEXT,
     purged_at TEXT,
     error TEXT,
     attempts INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX jobs_queue ON jobs (status, created_at);
   CREATE INDEX jobs_by_account ON jobs (account_id, environment, created_at);
   CREATE INDEX jobs_by_key ON jobs (key_id, status);`,
  // Job completion callbacks (spec 6.3): where, and how delivery fared.
  `ALTER TABLE jobs ADD COLUMN callback_url TEXT;
   ALTER TABLE jobs ADD COLUMN callback_delivered_at TEXT;
   ALTER TABLE jobs ADD COLUMN callback_attempts INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN callback_error TEXT;`,
  // Recognition jobs: kind stt (SQLite cannot widen a CHECK in place, so the table is made
  // anew and its rows copied), and the transcript of a finished one.
  `CREATE TABLE jobs_new (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     kind TEXT NOT NULL CHECK (kind IN ('tts', 'stt')),
     status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
     request TEXT NOT NULL,
     created_at TEXT NOT NULL,
     started_at TEXT,
     finished_at TEXT,
     audio TEXT,
     result_expires_at TEXT,
     purged_at TEXT,
     error TEXT,
     attempts INTEGER NOT NULL DEFAULT 0,
     callback_url TEXT,
     callback_delivered_at TEXT,
     callback_attempts INTEGER NOT NULL DEFAULT 0,
     callback_error TEXT,
     transcript TEXT
   );
   INSERT INTO jobs_new (id, account_id, key_id, environment, kind, status, request, created_at, started_at, finished_at, audio,
                         result_expires_at, purged_at, error, attempts, callback_url, callback_delivered_at, callback_attempts, callback_error)
     SELECT id, account_id, key_id, environment, kind, status, request, created_at, started_at, finished_at, audio,
            result_expires_at, purged_at, error, attempts, callback_url, callback_delivered_at, callback_attempts, callback_error
     FROM jobs ORDER BY rowid;
   DROP TABLE jobs;
   ALTER TABLE jobs_new RENAME TO jobs;
   CREATE INDEX jobs_queue ON jobs (status, created_at);
   CREATE INDEX jobs_by_account ON jobs (account_id, environment, created_at);
   CREATE INDEX jobs_by_key ON jobs (key_id, status);`,
];
