/**
 * Loads the trunk file of the dialplan folder (`trunks.yaml` or `trunks.yml`): its syntax and
 * schema, then what a schema cannot say — ports in range, addresses that are addresses, the
 * password variable set, a registering trunk with everything registering needs, a TLS trunk's
 * CA file readable and holding certificates in force, names used once. Every problem names
 * the file, line and column.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Ajv } from 'ajv';
import type { Env } from '../../config-values.js';
import { DialplanError, readYamlFile, type YamlPath } from '../../dialplan/yaml-file.js';
import { addRule } from '../sip/call-admission.js';
import type { TransportName } from '../sip/sip-transport.js';
import { TRUNK_DEFAULTS, TrunkFileSchema, TrunkSchema, type TrunkEntry } from './trunk-schema.js';

/** The names the trunk file may have, in the dialplan folder; the dialplan loader leaves them alone. */
export const TRUNK_FILE_NAMES = ['trunks.yaml', 'trunks.yml'] as const;

/** Whether a file (by its name) is a trunk file rather than a dialplan. */
export function isTrunkFile(file: string): boolean {
  return (TRUNK_FILE_NAMES as readonly string[]).includes(path.basename(file));
}

/** A host and port. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A checked trunk, with its defaults filled in. */
export interface TrunkConfig {
  readonly name: string;
  readonly file: string;
  /** The provider's domain and registrar; null for a trunk that does not register. */
  readonly registrar: HostPort | null;
  /** Where requests to the trunk go: the outbound proxy, else the registrar. */
  readonly proxy: HostPort | null;
  readonly transport: TransportName;
  /** `tls_ca_file`, as an absolute path; null: the trunk's certificate must chain to a public root. */
  readonly tlsCaFile: string | null;
  /** The certificates of `tls_ca_file` (PEM), read when the file was loaded. */
  readonly tlsCa: string | null;
  readonly username: string | null;
  readonly authUsername: string | null;
  /** Read from the variable `password_env` names. Never log it. */
  readonly password: string | null;
  readonly realm: string | null;
  readonly fromUser: string | null;
  readonly fromDomain: string | null;
  readonly callerId: string | null;
  readonly codecs: ReadonlyArray<'PCMA' | 'PCMU' | 'opus'>;
  /** The trunk's own sources (CIDR), allowed to call for this trunk. */
  readonly allow: readonly string[];
  readonly maxCalls: number;
  readonly register: boolean;
  readonly expiresSeconds: number;
  /** 0: no OPTIONS keep-alive. */
  readonly optionsIntervalSeconds: number;
}

const ajv = new Ajv({ allErrors: false, strict: false });
const validateFile = ajv.compile(TrunkFileSchema);
const validateTrunk = ajv.compile(TrunkSchema);

/**
 * The trunk file of a dialplan folder, checked; no trunks when there is none.
 * @throws DialplanError at the first problem
 */
export async function loadTrunks(directory: string, env: Env = process.env): Promise<TrunkConfig[]> {
  for (const name of TRUNK_FILE_NAMES) {
    const file = path.join(directory, name);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new DialplanError(file, 0, 0, `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    return checkTrunks(file, text, env);
  }
  return [];
}

/**
 * Parses and checks a trunk file's text.
 * @throws DialplanError at the first problem
 */
export function checkTrunks(file: string, text: string, env: Env = process.env): TrunkConfig[] {
  const { data, at, failure } = readYamlFile(file, text);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw at([], 'a trunk file is a mapping with the list trunks');
  const fileProblem = failure(validateFile, data, []);
  if (fileProblem) throw fileProblem;
  const names = new Set<string>();
  return (data as { trunks: unknown[] }).trunks.map((entry, index) => {
    const base: YamlPath = ['trunks', index];
    const problem = failure(validateTrunk, entry, base);
    if (problem) throw problem;
    const trunk = entry as TrunkEntry;
    if (names.has(trunk.name)) throw at([...base, 'name'], `the trunk name ${JSON.stringify(trunk.name)} is used twice`);
    names.add(trunk.name);
    return resolveTrunk(file, trunk, env, (field, message) => at([...base, field], message));
  });
}

function resolveTrunk(file: string, trunk: TrunkEntry, env: Env, at: (field: string, message: string) => DialplanError): TrunkConfig {
  const transport = (trunk.transport ?? TRUNK_DEFAULTS.transport).toUpperCase() as TransportName;
  const defaultPort = transport === 'TLS' ? 5061 : 5060;
  const registrar =
    trunk.registrar === undefined
      ? null
      : hostPort(trunk.registrar, defaultPort, () => at('registrar', `registrar ${JSON.stringify(trunk.registrar)} has a port outside 1–65535`));
  const proxy =
    trunk.proxy === undefined ? null : hostPort(trunk.proxy, defaultPort, () => at('proxy', `proxy ${JSON.stringify(trunk.proxy)} has a port outside 1–65535`));
  let password: string | null = null;
  if (trunk.password_env !== undefined) {
    password = env[trunk.password_env] ?? '';
    // Empty counts as unset: `NAME=` in an env file sets nothing. The message never shows a value.
    if (password === '') throw at('password_env', `password_env names ${trunk.password_env}, which is not set in the environment`);
  }
  const register = trunk.register ?? registrar !== null;
  if (register) {
    if (!registrar) throw at('register', 'a trunk that registers needs its registrar');
    if (trunk.username === undefined) throw at('register', 'a trunk that registers needs its username');
  }
  if (trunk.username !== undefined && password === null && register)
    throw at('register', 'a trunk that registers needs password_env (the variable with its password)');
  if (!registrar && !proxy) throw at('name', 'a trunk needs a registrar or a proxy: where its calls go');
  const tlsCaFile = trunk.tls_ca_file === undefined ? null : path.resolve(path.dirname(file), trunk.tls_ca_file);
  const tlsCa = tlsCaFile === null ? null : caCertificates(trunk, transport, tlsCaFile, (message) => at('tls_ca_file', message));
  const allow = trunk.allow ?? [];
  allow.forEach((rule, index) => {
    try {
      addRule(new net.BlockList(), rule);
    } catch (error) {
      throw at('allow', `allow entry ${index + 1}: ${(error as Error).message}`);
    }
  });
  return {
    name: trunk.name,
    file,
    registrar,
    proxy: proxy ?? registrar,
    transport,
    tlsCaFile,
    tlsCa,
    username: trunk.username ?? null,
    authUsername: trunk.auth_username ?? null,
    password,
    realm: trunk.realm ?? null,
    fromUser: trunk.from_user ?? trunk.username ?? null,
    fromDomain: trunk.from_domain ?? registrar?.host ?? null,
    callerId: trunk.caller_id ?? null,
    codecs: trunk.codecs ?? TRUNK_DEFAULTS.codecs,
    allow,
    maxCalls: trunk.max_calls ?? TRUNK_DEFAULTS.maxCalls,
    register,
    expiresSeconds: trunk.expires_s ?? TRUNK_DEFAULTS.expiresSeconds,
    optionsIntervalSeconds: trunk.options_interval_s ?? TRUNK_DEFAULTS.optionsIntervalSeconds,
  };
}

/**
 * The PEM text of a trunk's CA file, checked: for a TLS trunk, readable, and every certificate
 * in it readable and in force now (an expired CA would refuse the carrier at its first
 * connection, with nothing in the file to say why).
 */
function caCertificates(trunk: TrunkEntry, transport: TransportName, file: string, problem: (message: string) => DialplanError): string {
  const named = `tls_ca_file ${JSON.stringify(trunk.tls_ca_file)}`;
  if (transport !== 'TLS') throw problem(`${named} is for transport: tls (this trunk's transport is ${transport.toLowerCase()})`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw problem(`${named} (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw problem(`${named} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  const now = Date.now();
  blocks.forEach((block, index) => {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(block);
    } catch (error) {
      throw problem(`${named}: certificate ${index + 1} cannot be read (${(error as Error).message})`);
    }
    if (Date.parse(certificate.validTo) < now)
      throw problem(`${named}: certificate ${index + 1} (${certificate.subject.replaceAll('\n', ', ')}) expired ${certificate.validTo}`);
    if (Date.parse(certificate.validFrom) > now)
      throw problem(`${named}: certificate ${index + 1} (${certificate.subject.replaceAll('\n', ', ')}) is valid only from ${certificate.validFrom}`);
  });
  return blocks.join('\n') + '\n';
}

/** `host[:port]` (IPv6 in brackets) as host and port. */
function hostPort(text: string, defaultPort: number, badPort: () => DialplanError): HostPort {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(text)!;
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65_535) throw badPort();
  return { host: (match[1] ?? match[2])!, port };
}
