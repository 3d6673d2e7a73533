import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { loadModelCatalog, ModelCatalogError, type CatalogModel } from '../../engine/models/model-catalog.js';
import { listInstalledModels, ModelManifestError, type InstalledModel } from '../../engine/models/model-manifest.js';
import { ModelArchiveError } from '../../engine/models/model-archive.js';
import { pullModel, ModelPullError } from '../../engine/models/model-pull.js';
import { verifyModel } from '../../engine/models/model-verify.js';
import { probeModels } from '../../engine/models/load-probe.js';
import { LANGUAGES } from '../catalog/languages.js';
import { loadConfig } from '../config.js';
import { CommandFailure } from './command-failure.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr models`. */
export const MODELS_HELP = `sprachrohr models — recognition models in the models folder

Usage: sprachrohr models list
       sprachrohr models verify [NAME ...] [--no-load]
       sprachrohr models pull NAME [--force]

  list     installed models (engine, languages, origin) and the catalog's models
  verify   check installed models: the files their engine needs, the SHA-256 of every
           file recorded when it was pulled, and (unless --no-load) that each loads and
           decodes a second of audio in a separate process; exits with 1 when one fails
  pull     download a catalog model from its publisher, check its checksum, unpack
           it and install it (--force replaces an installed one); shows progress

The models folder is SPRACHROHR_MODELS_DIR (default <SPRACHROHR_DATA_DIR>/models);
SPRACHROHR_MODEL_CATALOG names a JSON file of further models (docs/models.md).
The service loads every installed model at start.
`;

function describe(model: InstalledModel): string {
  const manifest = model.manifest;
  const kind = manifest.engine === 'vosk' ? 'vosk' : `sherpa-onnx ${manifest.type}`;
  const languages = manifest.languages.length > 0 ? manifest.languages.join(',') : 'all languages';
  return `${model.name}  ${kind}  ${languages}  ${manifest.source ? `from ${manifest.source.url}` : 'installed by hand'}`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function list(modelsDir: string, catalog: readonly CatalogModel[]): Promise<string> {
  const installed = await listInstalledModels(modelsDir);
  const names = new Set(installed.map((model) => model.name));
  const lines = [`Installed in ${modelsDir}:`];
  lines.push(...(installed.length > 0 ? installed.map((model) => `  ${describe(model)}`) : ['  (none)']));
  lines.push('', 'Catalog (sprachrohr models pull NAME):');
  for (const entry of catalog) {
    const size = entry.sizeBytes ? `, ${megabytes(entry.sizeBytes)}` : '';
    lines.push(`  ${entry.name}${names.has(entry.name) ? ' [installed]' : ''}  ${entry.description}${size}`);
  }
  return lines.join('\n');
}

async function verify(modelsDir: string, names: readonly string[], load: boolean): Promise<string> {
  const installed = await listInstalledModels(modelsDir);
  const unknown = names.filter((name) => !installed.some((model) => model.name === name));
  if (unknown.length > 0) throw new CommandFailure(`not installed in ${modelsDir}: ${unknown.join(', ')}`);
  const chosen = names.length > 0 ? installed.filter((model) => names.includes(model.name)) : installed;
  if (chosen.length === 0) return `no models installed in ${modelsDir}`;
  const checks = await Promise.all(chosen.map((model) => verifyModel(model)));
  // Loading runs only for models whose files are complete, all in one separate process.
  const probes = load
    ? await probeModels(
        modelsDir,
        checks.filter((check) => check.ok).map((check) => check.name),
        LANGUAGES.map((language) => language.code),
      )
    : [];
  const lines: string[] = [];
  let failed = 0;
  for (const check of checks) {
    const probe = probes.find((candidate) => candidate.name === check.name);
    const problems = [...check.problems, ...(probe && !probe.ok ? [probe.detail] : [])];
    if (problems.length === 0) {
      const files = check.filesChecked > 0 ? `${check.filesChecked} files match their recorded SHA-256` : 'layout complete; no recorded checksums';
      lines.push(`${check.name}: ok (${files}${probe ? `; ${probe.detail}` : ''})`);
    } else {
      failed += 1;
      lines.push(`${check.name}: FAILED`, ...problems.map((problem) => `  ${problem}`));
    }
  }
  if (failed > 0) throw new CommandFailure(lines.join('\n'));
  return lines.join('\n');
}

async function pull(modelsDir: string, catalog: readonly CatalogModel[], name: string, force: boolean, progress: NodeJS.WritableStream): Promise<string> {
  const entry = catalog.find((model) => model.name === name);
  if (!entry) throw new UsageError(`"${name}" is not in the catalog; "sprachrohr models list" shows it`);
  // The bar goes to stderr, so stdout keeps only the result; without a terminal it prints
  // a line now and then instead of redrawing.
  const bar = new SingleBar({
    stream: progress,
    format: `${name} [{bar}] {percentage}% {received}/{size}`,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    hideCursor: true,
  });
  let started = false;
  try {
    const result = await pullModel(entry, {
      modelsDir,
      force,
      onProgress: (received, total) => {
        const size = total ?? Math.max(received, 1);
        const payload = { received: megabytes(received), size: total ? megabytes(total) : '?' };
        if (!started) {
          bar.start(size, received, payload);
          started = true;
        } else {
          bar.setTotal(Math.max(size, received));
          bar.update(received, payload);
        }
      },
    });
    if (started) bar.stop();
    return `installed ${name} in ${result.folder} (${megabytes(result.bytes)} downloaded, checksum matched)`;
  } catch (error) {
    if (started) bar.stop();
    throw error;
  }
}

/** Runs `sprachrohr models`; returns what to print. */
export async function modelsCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { force: { type: 'boolean', default: false }, 'no-load': { type: 'boolean', default: false } },
  });
  const [action, ...names] = positionals;
  const config = loadConfig(io.env);
  try {
    switch (action) {
      case 'list':
        if (names.length > 0) throw new UsageError('list takes no names');
        return await list(config.modelsDir, await loadModelCatalog(config.modelCatalog));
      case 'verify':
        return await verify(config.modelsDir, names, !values['no-load']);
      case 'pull':
        if (names.length !== 1) throw new UsageError('pull takes one model name');
        return await pull(config.modelsDir, await loadModelCatalog(config.modelCatalog), names[0]!, values.force, io.stderr);
      default:
        throw new UsageError(action ? `unknown action "${action}" (list, verify or pull)` : 'give an action: list, verify or pull');
    }
  } catch (error) {
    if (error instanceof ModelPullError || error instanceof ModelCatalogError || error instanceof ModelManifestError || error instanceof ModelArchiveError) {
      throw new CommandFailure(error.message);
    }
    throw error;
  }
}
