/**
 * A TLS trunk's `tls_ca_file` as the trunk loader reads it, with real certificate files made by
 * openssl in a temporary folder (so an integration test: it starts openssl): the path relative
 * to the trunk file, the PEM kept for the connections, and each refusal with its file, line and
 * column — a trunk that is not TLS, a file that cannot be read, one without a certificate, a
 * certificate that cannot be read, and a bundle with an expired one. A running gateway takes a
 * CA file replaced on disk, beside trunks.yaml or in another folder.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DialplanLibrary } from '../../../src/dialplan/dialplan-library.js';
import { checkTrunks } from '../../../src/telephony/trunks/trunk-loader.js';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { eventually } from '../../helpers/eventually.js';
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

describe('a rotated CA file on disk', () => {
  it('is taken by the running gateway without a change to trunks.yaml: beside it, in another folder, in a Kubernetes-style mount', async () => {
    const inside = makeTestCertificates();
    const outside = makeTestCertificates();
    const rotated = makeTestCertificates();
    // A Secret mounted as Kubernetes does it: the file is a link through ..data, which a rotation swaps.
    const mount = await fs.mkdtemp(path.join(os.tmpdir(), 'ca-mount-'));
    const version = async (name: string, ca: Buffer): Promise<void> => {
      await fs.mkdir(path.join(mount, name));
      await fs.writeFile(path.join(mount, name, 'ca.pem'), ca);
      await fs.symlink(name, path.join(mount, '..data_tmp'));
      await fs.rename(path.join(mount, '..data_tmp'), path.join(mount, '..data'));
    };
    await version('..2026_12_01', outside.ca);
    await fs.symlink(path.join('..data', 'ca.pem'), path.join(mount, 'ca.pem'));
    const { logger } = capturedLogger();
    let library: DialplanLibrary | null = null;
    try {
      const dir = inside.dir;
      await fs.writeFile(
        path.join(dir, 'echo.yaml'),
        'name: echo\nroutes:\n  - number: "*"\n    language: en\n    voice: anna\n    steps:\n      - hangup: {}\n',
      );
      const trunk = (name: string, caFile: string): string[] => [
        `  - name: ${name}`,
        `    proxy: ${name}.example.ch`,
        '    transport: tls',
        `    tls_ca_file: ${caFile}`,
      ];
      await fs.writeFile(
        path.join(dir, 'trunks.yaml'),
        ['trunks:', ...trunk('pbx', 'ca.pem'), ...trunk('carrier', outside.caFile), ...trunk('mounted', path.join(mount, 'ca.pem'))].join('\n'),
      );
      library = await DialplanLibrary.open(dir, logger);
      const applied: Array<Record<string, string | null>> = [];
      library.onTrunks((trunks) => applied.push(Object.fromEntries(trunks.filter((each) => each.name !== 'mounted').map((each) => [each.name, each.tlsCa]))));
      const mounted = (): string | null | undefined => library!.trunks.find((each) => each.name === 'mounted')?.tlsCa;
      library.watch();
      expect(Object.fromEntries(library.trunks.map((each) => [each.name, each.tlsCa]))).toEqual({
        mounted: outside.ca.toString(),
        pbx: inside.ca.toString(),
        carrier: outside.ca.toString(),
      });

      // The CA beside trunks.yaml is replaced by another one.
      await fs.writeFile(inside.caFile, rotated.ca);
      await eventually(() => applied.length >= 1, 5000, 'the trunks to be applied again');
      expect(applied.at(-1)).toEqual({ pbx: rotated.ca.toString(), carrier: outside.ca.toString() });

      // The CA in the other folder is replaced.
      await fs.writeFile(outside.caFile, rotated.ca);
      await eventually(() => applied.length >= 2, 5000, 'the trunks to be applied once more');
      expect(applied.at(-1)).toEqual({ pbx: rotated.ca.toString(), carrier: rotated.ca.toString() });

      // The mount's new version: only its ..data link changes, no event names ca.pem.
      expect(mounted()).toBe(outside.ca.toString());
      await version('..2026_12_02', rotated.ca);
      await eventually(() => mounted() === rotated.ca.toString(), 5000, "the mounted CA's new version to be taken");
    } finally {
      await library?.close();
      for (const certificates of [inside, outside, rotated]) certificates.remove();
      await fs.rm(mount, { recursive: true, force: true });
    }
  });
});
