/** Where credit notices go: an SMTP server named by URL, and the sender address. */
import os from 'node:os';
import { ConfigError, text, type Env } from '../config-values.js';

/** How notices are sent. */
export interface NoticeConfig {
  /** `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465`; null: notices are logged only. */
  readonly smtpUrl: string | null;
  /** The From address. */
  readonly from: string;
}

/** Reads the notice settings. */
export function loadNoticeConfig(env: Env): NoticeConfig {
  const smtpUrl = env['SPRACHROHR_SMTP_URL'] || null;
  if (smtpUrl !== null) {
    let url: URL;
    try {
      url = new URL(smtpUrl);
    } catch {
      throw new ConfigError('SPRACHROHR_SMTP_URL', 'must be a URL such as smtp://user:password@mail.example.ch:587');
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
      throw new ConfigError('SPRACHROHR_SMTP_URL', `must start with smtp:// or smtps://, not ${url.protocol}//`);
  }
  return { smtpUrl, from: text(env, 'SPRACHROHR_NOTICE_FROM', `sprachrohr@${os.hostname()}`) };
}

/** The variables {@link loadNoticeConfig} reads. */
export const NOTICE_CONFIG_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['SPRACHROHR_SMTP_URL', 'SMTP server for credit notices: smtp://user:password@host:587 or smtps://…:465 (unset: notices are only logged)'],
  ['SPRACHROHR_NOTICE_FROM', 'From address of the notices (default sprachrohr@<host name>)'],
];
