/**
 * Accounts: who a deployment's keys act for. Operators make and inspect them with
 * `sprachrohr accounts`; each has a webhook secret that signs its job callbacks (spec 6.3),
 * shown to the operator and rotatable, and the e-mail addresses its notices go to.
 */
import { randomBytes } from 'node:crypto';
import type { AccountRecord, AccountRepository } from '../store/store.js';
import { KeyManagementError } from './key-service.js';

/** Account names: what an operator types, and safe in a file name or a URL. */
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** An address good enough to hand to an SMTP server: one @, no spaces or angle brackets. */
const EMAIL = /^[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;]+$/;

/** A new secret: 32 random bytes, hex. */
function newSecret(): string {
  return randomBytes(32).toString('hex');
}

/** Creates, finds and changes accounts. */
export class AccountService {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates an account. */
  async create(name: string, emails: readonly string[] = []): Promise<AccountRecord> {
    if (!NAME.test(name))
      throw new KeyManagementError(`an account name is 1 to 63 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit; got "${name}"`);
    if (await this.accounts.findByName(name)) throw new KeyManagementError(`there is already an account "${name}"`);
    const record: AccountRecord = {
      id: `acct_${randomBytes(9).toString('base64url')}`,
      name,
      createdAt: this.now().toISOString(),
      webhookSecret: newSecret(),
      emails: checkEmails(emails),
    };
    await this.accounts.insert(record);
    return record;
  }

  /** Every account, oldest first (the default one first of all). */
  list(): Promise<AccountRecord[]> {
    return this.accounts.list();
  }

  /** The account of a name. */
  async byName(name: string): Promise<AccountRecord> {
    const account = await this.accounts.findByName(name);
    if (!account) throw new KeyManagementError(`no account "${name}"; see sprachrohr accounts list`);
    return account;
  }

  /** The account of an id (a key's). */
  async byId(id: string): Promise<AccountRecord | undefined> {
    return this.accounts.findById(id);
  }

  /** A new webhook secret for the account; the old one stops signing at once. */
  async rotateSecret(name: string): Promise<AccountRecord> {
    const account = await this.byName(name);
    await this.accounts.update(account.id, { webhookSecret: newSecret() });
    return this.byName(name);
  }

  /** Replaces the account's notice addresses. */
  async setEmails(name: string, emails: readonly string[]): Promise<AccountRecord> {
    const account = await this.byName(name);
    await this.accounts.update(account.id, { emails: checkEmails(emails) });
    return this.byName(name);
  }
}

function checkEmails(emails: readonly string[]): string[] {
  const bad = emails.find((email) => !EMAIL.test(email));
  if (bad !== undefined) throw new KeyManagementError(`"${bad}" is not an e-mail address`);
  return [...new Set(emails)];
}
