/**
 * Throwaway certificates for the SIP-over-TLS tests, made with openssl (Debian's) in a
 * temporary folder: a private CA, as a company's PBX or a carrier's test platform has one, and a
 * server certificate it signed for the names and addresses a test connects to. EC P-256 keys,
 * valid for a day: quick to make, and nothing outlives the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The files of a CA and of the server certificate it signed (PEM), and their contents. */
export interface TestCertificates {
  readonly dir: string;
  /** The CA's certificate: what a client that trusts the server names. */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Removes the folder. */
  remove(): void;
}

/** What the server certificate is for: its subjectAltName entries. */
export interface CertificateSubject {
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Runs openssl; its complaint is in the error when it fails. */
function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes a CA and a server certificate for `subject` (default: `localhost` and 127.0.0.1). */
export function makeTestCertificates(subject: CertificateSubject = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }): TestCertificates {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sip-tls-'));
  const file = (name: string): string => path.join(dir, name);
  openssl(['req', '-x509', ...EC_KEY, '-days', '1', '-subj', '/CN=sprachrohr test CA', '-keyout', file('ca-key.pem'), '-out', file('ca.pem')]);
  openssl(['req', ...EC_KEY, '-subj', '/CN=sprachrohr test peer', '-keyout', file('key.pem'), '-out', file('peer.csr')]);
  const names = [...(subject.dnsNames ?? []).map((name) => `DNS:${name}`), ...(subject.ipAddresses ?? []).map((address) => `IP:${address}`)];
  writeFileSync(file('peer.ext'), `subjectAltName=${names.join(',')}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  openssl([
    'x509',
    '-req',
    '-in',
    file('peer.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca-key.pem'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file('peer.ext'),
    '-out',
    file('cert.pem'),
  ]);
  return {
    dir,
    caFile: file('ca.pem'),
    certFile: file('cert.pem'),
    keyFile: file('key.pem'),
    ca: readFileSync(file('ca.pem')),
    cert: readFileSync(file('cert.pem')),
    key: readFileSync(file('key.pem')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A self-signed CA certificate that was valid only on 1 January 2020 (PEM), in a file of `dir`; its path. */
export function writeExpiredCertificate(dir: string): string {
  const file = (name: string): string => path.join(dir, name);
  // `openssl req` takes no dates in the past; `openssl ca` does, with a database of its own.
  writeFileSync(file('expired-index.txt'), '');
  writeFileSync(file('expired-serial'), '01\n');
  writeFileSync(
    file('expired-ca.cnf'),
    ['[ca]', 'default_ca = test', '[test]', `database = ${file('expired-index.txt')}`, `new_certs_dir = ${dir}`, `serial = ${file('expired-serial')}`]
      .concat(['default_md = sha256', 'policy = any', '[any]', 'commonName = supplied'])
      .join('\n'),
  );
  openssl(['req', '-new', ...EC_KEY, '-subj', '/CN=expired test CA', '-keyout', file('expired-key.pem'), '-out', file('expired.csr')]);
  openssl(
    ['ca', '-batch', '-config', file('expired-ca.cnf'), '-selfsign', '-keyfile', file('expired-key.pem'), '-in', file('expired.csr')].concat([
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200102000000Z',
      '-out',
      file('expired.pem'),
    ]),
  );
  return file('expired.pem');
}
