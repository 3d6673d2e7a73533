/**
 * A TLS trunk's `tls_ca_file` as the trunk loader reads it, with real certificate files made by
 * openssl in a temporary folder (so an integration test: it starts openssl): the path relative
 * to the trunk file, the PEM kept for the connections, and each refusal with its file, line and
 * column — a trunk that is not TLS, a file that cannot be read, one without a certificate, a
 * certificate that cannot be read, and a bundle with an expired one.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTrunks } from '../../../src/telephony/trunks/trunk-loader.js';
import { makeTestCertificates, writeExpiredCertificate } from '../../helpers/tls-certificates.js';

const env = { CARRIER_PASSWORD: 'geheim' };

describe("a TLS trunk's CA file", () => {
  it("reads a TLS trunk's CA file, relative to the trunk file, and refuses one that cannot vouch for anything", async () => {
    const certificates = makeTestCertificates();
    const dir = certificates.dir;
    try {
      const file = path.join(dir, 'trunks.yaml');
      const tlsTrunk = (caFile: string, transport = 'tls'): string =>
        ['trunks:', '  - name: pbx', '    proxy: pbx.example.ch', `    transport: ${transport}`, `    tls_ca_file: ${caFile}`].join('\n');
      const problemIn = (text: string): string => {
        try {
          checkTrunks(file, text, env);
        } catch (error) {
          return (error as Error).message;
        }
        throw new Error('the file was accepted');
      };
      const [trunk] = checkTrunks(file, tlsTrunk('ca.pem'), env);
      expect(trunk).toMatchObject({ transport: 'TLS', tlsCaFile: certificates.caFile, proxy: { host: 'pbx.example.ch', port: 5061 } });
      expect(trunk!.tlsCa).toBe(certificates.ca.toString('utf8'));
      // Without the field, the public roots: nothing is trusted that was not asked for.
      expect(checkTrunks(file, 'trunks:\n  - name: pbx\n    proxy: pbx.example.ch\n    transport: tls\n', env)[0]).toMatchObject({
        tlsCaFile: null,
        tlsCa: null,
      });

      expect(problemIn(tlsTrunk('ca.pem', 'tcp'))).toBe(`${file}:5:18: tls_ca_file "ca.pem" is for transport: tls (this trunk's transport is tcp)`);
      expect(problemIn(tlsTrunk('missing.pem'))).toBe(`${file}:5:18: tls_ca_file "missing.pem" (${path.join(dir, 'missing.pem')}) cannot be read: ENOENT`);
      // A key is no certificate.
      expect(problemIn(tlsTrunk('key.pem'))).toBe(`${file}:5:18: tls_ca_file "key.pem" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
      await fs.writeFile(path.join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
      expect(problemIn(tlsTrunk('broken.pem'))).toMatch(new RegExp(`^${file}:5:18: tls_ca_file "broken.pem": certificate 1 cannot be read \\(`));
      // The second certificate of a bundle has run out.
      const expired = writeExpiredCertificate(dir);
      await fs.writeFile(path.join(dir, 'bundle.pem'), Buffer.concat([certificates.ca, await fs.readFile(expired)]));
      expect(problemIn(tlsTrunk('bundle.pem'))).toBe(
        `${file}:5:18: tls_ca_file "bundle.pem": certificate 2 (CN=expired test CA) expired Jan  2 00:00:00 2020 GMT`,
      );
    } finally {
      certificates.remove();
    }
  });
});
