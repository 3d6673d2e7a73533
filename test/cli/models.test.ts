/**
 * `sprachrohr models` against a local HTTP server that serves fixture archives (the real
 * publishers cannot be reached from the test machines): download, checksum, unpack, install,
 * list, verify, and every way a download can go wrong. The command runs in this process
 * (`runCliInProcess`: the dispatch, output and exit status of the installed command); the
 * built command's own exit status is tested in cli.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { listFiles } from '../../engine/models/model-verify.js';
import { runCliInProcess } from '../helpers/cli.js';
import { writeTinyVoskModel } from '../helpers/tiny-vosk-model.js';

/** The files of a tiny Vosk model that libvosk really loads (read in `beforeAll`). */
const VOSK_FILES: Record<string, Buffer> = {};

function zipOf(files: Record<string, Buffer | string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');
const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex');

let dir: string;
let server: http.Server;
let base: string;
const served = new Map<string, Buffer>();
let catalogFile: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { SPRACHROHR_DATA_DIR: path.join(dir, 'data'), SPRACHROHR_MODELS_DIR: path.join(dir, 'models'), SPRACHROHR_MODEL_CATALOG: catalogFile, ...extra };
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-models-'));
  await writeTinyVoskModel(path.join(dir, 'vosk-src'));
  for (const file of await listFiles(path.join(dir, 'vosk-src'))) VOSK_FILES[file] = await fs.readFile(path.join(dir, 'vosk-src', file));
  const goodZip = await zipOf(Object.fromEntries(Object.entries(VOSK_FILES).map(([name, text]) => [`vosk-model-tiny/${name}`, text])));
  served.set('/tiny.zip', goodZip);
  // The same archive with its model file replaced: same size, different bytes.
  served.set(
    '/tampered.zip',
    await zipOf({
      ...Object.fromEntries(Object.entries(VOSK_FILES).map(([name, text]) => [`vosk-model-tiny/${name}`, text])),
      'vosk-model-tiny/graph/words.txt': '<eps> 0\nhallo 1\n',
    }),
  );
  served.set('/incomplete.zip', await zipOf({ 'm/am/final.mdl': 'x', 'm/conf/mfcc.conf': '' }));
  // yazl will not write a path that leaves the folder: the name is patched in afterwards
  // (same length, in the local header and the central directory).
  const escape = await zipOf({ 'xx/xx/outside.txt': 'should never be written' });
  for (let at = escape.indexOf('xx/xx/'); at >= 0; at = escape.indexOf('xx/xx/', at + 1)) escape.write('../../', at, 'latin1');
  served.set('/escape.zip', escape);
  served.set('/not-a-zip.zip', Buffer.from('this is an HTML error page, not an archive'));
  // A sherpa-onnx style release: tar.bz2 with one top folder.
  const sherpaDir = path.join(dir, 'sherpa-src');
  await fs.mkdir(path.join(sherpaDir, 'sherpa-onnx-tiny-ctc'), { recursive: true });
  await fs.writeFile(path.join(sherpaDir, 'sherpa-onnx-tiny-ctc', 'model.onnx'), 'onnx bytes');
  await fs.writeFile(path.join(sherpaDir, 'sherpa-onnx-tiny-ctc', 'tokens.txt'), '<blk> 0\na 1\n');
  await tar.c({ cwd: sherpaDir, file: path.join(dir, 'sherpa.tar') }, ['sherpa-onnx-tiny-ctc']);
  const bzip2 = spawnSync('bzip2', ['-k', path.join(dir, 'sherpa.tar')]);
  if (bzip2.status !== 0) throw new Error(`bzip2 failed: ${bzip2.stderr.toString()}`);
  served.set('/sherpa-onnx-tiny-ctc.tar.bz2', await fs.readFile(path.join(dir, 'sherpa.tar.bz2')));

  server = http.createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === '/broken-off.zip') {
      // Promises a whole archive, sends a third of it, then drops the connection.
      const body = served.get('/tiny.zip')!;
      response.writeHead(200, { 'content-length': String(body.length) });
      response.write(body.subarray(0, Math.floor(body.length / 3)), () => response.destroy());
      return;
    }
    const body = served.get(url);
    if (!body) {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const vosk = { engine: 'vosk', languages: ['de'] };
  const catalog = [
    { name: 'tiny-de', description: 'tiny fixture', url: `${base}/tiny.zip`, md5: md5(goodZip), manifest: vosk },
    { name: 'tiny-sha', description: 'tiny fixture by SHA-256', url: `${base}/tiny.zip`, sha256: sha256(goodZip), sizeBytes: goodZip.length, manifest: vosk },
    { name: 'tampered', description: 'checksum of the good archive', url: `${base}/tampered.zip`, sha256: sha256(goodZip), manifest: vosk },
    { name: 'incomplete', description: 'not a whole model', url: `${base}/incomplete.zip`, sha256: sha256(served.get('/incomplete.zip')!), manifest: vosk },
    { name: 'escape', description: 'path traversal', url: `${base}/escape.zip`, sha256: sha256(served.get('/escape.zip')!), manifest: vosk },
    { name: 'not-a-zip', description: 'an error page', url: `${base}/not-a-zip.zip`, sha256: sha256(served.get('/not-a-zip.zip')!), manifest: vosk },
    { name: 'missing', description: 'gone from the server', url: `${base}/missing.zip`, sha256: sha256(goodZip), manifest: vosk },
    { name: 'broken-off', description: 'connection drops', url: `${base}/broken-off.zip`, sha256: sha256(goodZip), manifest: vosk },
    {
      name: 'tiny-ctc',
      description: 'sherpa-onnx fixture',
      url: `${base}/sherpa-onnx-tiny-ctc.tar.bz2`,
      sha256: sha256(served.get('/sherpa-onnx-tiny-ctc.tar.bz2')!),
      manifest: { engine: 'sherpa-onnx', type: 'nemo-ctc', languages: ['en'], paths: { model: 'model.onnx', tokens: 'tokens.txt' } },
    },
  ];
  catalogFile = path.join(dir, 'catalog.json');
  await fs.writeFile(catalogFile, JSON.stringify(catalog));
});

afterAll(async () => {
  server?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function modelsFolder(): Promise<string[]> {
  return (await fs.readdir(path.join(dir, 'models')).catch(() => [])).sort();
}

describe('sprachrohr models', () => {
  it('pulls a zip model with its checksum, shows progress, and records every file', async () => {
    const result = await runCliInProcess(['models', 'pull', 'tiny-de'], env());
    expect(result.stderr).toContain('100%');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('installed tiny-de');
    const folder = path.join(dir, 'models', 'tiny-de');
    // The archive's top folder is gone: the model's parts sit in the model folder.
    expect(await fs.readFile(path.join(folder, 'am/final.mdl'))).toEqual(VOSK_FILES['am/final.mdl']);
    const manifest = JSON.parse(await fs.readFile(path.join(folder, 'sprachrohr-model.json'), 'utf8'));
    expect(manifest).toMatchObject({ engine: 'vosk', languages: ['de'], source: { url: `${base}/tiny.zip`, md5: md5(served.get('/tiny.zip')!) } });
    expect(Object.keys(manifest.files).sort()).toEqual(Object.keys(VOSK_FILES).sort());
    expect(manifest.files['conf/mfcc.conf']).toBe(sha256(VOSK_FILES['conf/mfcc.conf']!));

    const list = await runCliInProcess(['models', 'list'], env());
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/tiny-de {2}vosk {2}de {2}from http:\/\/127\.0\.0\.1/);
    expect(list.stdout).toContain('tiny-de [installed]');
    // The built-in catalog is still there under the operator's file.
    expect(list.stdout).toContain('vosk-model-small-de-0.15');

    const again = await runCliInProcess(['models', 'pull', 'tiny-de'], env());
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('installed already');
    expect((await runCliInProcess(['models', 'pull', 'tiny-de', '--force'], env())).code).toBe(0);
  });

  it('pulls a tar.bz2 sherpa-onnx model checked by SHA-256', async () => {
    const result = await runCliInProcess(['models', 'pull', 'tiny-ctc'], env());
    expect(result.code, result.stderr).toBe(0);
    expect(await fs.readFile(path.join(dir, 'models', 'tiny-ctc', 'tokens.txt'), 'utf8')).toContain('<blk>');
    expect((await runCliInProcess(['models', 'list'], env())).stdout).toMatch(/tiny-ctc {2}sherpa-onnx nemo-ctc {2}en/);
  });

  it('verifies installed models and names a file that changed or went missing', async () => {
    expect((await runCliInProcess(['models', 'pull', 'tiny-sha', '--force'], env())).code).toBe(0);
    const ok = await runCliInProcess(['models', 'verify', 'tiny-sha'], env());
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`tiny-sha: ok (${Object.keys(VOSK_FILES).length} files match their recorded SHA-256; loads and decodes in a separate process)`);

    await fs.writeFile(path.join(dir, 'models', 'tiny-sha', 'graph/words.txt'), '<eps> 0\nhallo 1\n');
    await fs.rm(path.join(dir, 'models', 'tiny-sha', 'conf/model.conf'));
    const bad = await runCliInProcess(['models', 'verify'], env());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('tiny-sha: FAILED');
    expect(bad.stderr).toContain('graph/words.txt has changed since it was installed');
    expect(bad.stderr).toContain('conf/model.conf is missing');
    expect(bad.stderr).not.toMatch(/at .*\.js:\d+/);

    // A model unpacked by hand has no recorded checksums: loading it is what finds the damage.
    const handMade = path.join(dir, 'models', 'hand-made-de');
    await writeTinyVoskModel(handMade);
    await fs.writeFile(path.join(handMade, 'sprachrohr-model.json'), JSON.stringify({ engine: 'vosk', languages: ['de'] }));
    expect((await runCliInProcess(['models', 'verify', 'hand-made-de'], env())).stdout).toContain(
      'hand-made-de: ok (layout complete; no recorded checksums; loads and decodes in a separate process)',
    );
    await fs.writeFile(path.join(handMade, 'am/final.mdl'), 'not a Kaldi model');
    const damaged = await runCliInProcess(['models', 'verify', 'hand-made-de'], env());
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/hand-made-de: FAILED\n {2}.*hand-made-de: Vosk could not load the model/);
    const skipped = await runCliInProcess(['models', 'verify', 'hand-made-de', '--no-load'], env());
    expect(skipped.stdout).toContain('hand-made-de: ok (layout complete; no recorded checksums)');
    await fs.rm(handMade, { recursive: true });

    const unknown = await runCliInProcess(['models', 'verify', 'nope'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not installed');
  });

  it('installs nothing when the download is wrong, damaged, unsafe, incomplete or broken off', async () => {
    const cases: Array<[name: string, message: RegExp]> = [
      ['tampered', /SHA-256 [0-9a-f]{64} is not the catalog's/],
      ['missing', /answered 404/],
      ['broken-off', /broke off after \d+ bytes/],
      ['not-a-zip', /not a readable zip archive/],
      ['escape', /a path outside its folder/],
      ['incomplete', /does not hold the model the catalog describes: incomplete is not a Vosk model: conf\/model.conf is missing/],
    ];
    for (const [name, message] of cases) {
      const result = await runCliInProcess(['models', 'pull', name], env());
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toMatch(message);
      expect(result.stderr, name).not.toMatch(/at .*\.js:\d+/);
      expect(await modelsFolder(), name).not.toContain(name);
    }
    // No half-finished download folders stay behind, and nothing escaped the models folder.
    expect((await modelsFolder()).filter((name) => name.startsWith('.'))).toEqual([]);
    await expect(fs.access(path.join(dir, 'outside.txt'))).rejects.toThrow();
  });

  it('refuses unknown names, bad actions and a broken catalog file clearly', async () => {
    const unknown = await runCliInProcess(['models', 'pull', 'vosk-model-huge-xx'], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('"vosk-model-huge-xx" is not in the catalog');
    const action = await runCliInProcess(['models', 'dance'], env());
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('unknown action "dance"');

    const badCatalog = path.join(dir, 'bad-catalog.json');
    await fs.writeFile(badCatalog, JSON.stringify([{ name: 'x', url: `${base}/tiny.zip`, manifest: { engine: 'vosk', languages: ['de'] } }]));
    const noChecksum = await runCliInProcess(['models', 'list'], env({ SPRACHROHR_MODEL_CATALOG: badCatalog }));
    expect(noChecksum.code).toBe(1);
    expect(noChecksum.stderr).toContain('entry 1: needs "sha256" (64 hex digits) or "md5"');

    await fs.mkdir(path.join(dir, 'models', 'hand-made'), { recursive: true });
    await fs.writeFile(path.join(dir, 'models', 'hand-made', 'sprachrohr-model.json'), '{"engine":"kaldi","languages":["de"]}');
    const badManifest = await runCliInProcess(['models', 'list'], env());
    expect(badManifest.code).toBe(1);
    expect(badManifest.stderr).toContain('hand-made/sprachrohr-model.json: "engine" must be "vosk" or "sherpa-onnx"');
    await fs.rm(path.join(dir, 'models', 'hand-made'), { recursive: true });
  });
});
