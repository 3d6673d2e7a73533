import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** File in the data folder that holds a generated key secret. */
export const KEY_SECRET_FILE = 'key-secret';

/**
 * The secret under which key fingerprints are computed: the configured one, else the one
 * generated into the data folder on first start (readable by the owner only). Losing it makes
 * every stored key unusable, so it lives beside the store it belongs to.
 */
export function loadKeySecret(configured: string | null, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, KEY_SECRET_FILE);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  try {
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
}
