/**
 * Runs `load-probe-child` over installed models and reads what became of each: loaded and
 * decoded, refused with an error, or ended the process (exit code or signal, with the last
 * lines it wrote).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What became of one model in the probe. */
export interface ModelProbe {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** The child script beside this module (compiled `.js`, or `.ts` run through tsx). */
function childCommand(): string[] {
  if (import.meta.url.endsWith('.js')) return [fileURLToPath(new URL('./load-probe-child.js', import.meta.url))];
  return ['--import', 'tsx', fileURLToPath(new URL('./load-probe-child.ts', import.meta.url))];
}

/** The last few non-empty lines of what a process wrote, on one line. */
function lastWords(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.slice(-3).join(' / ').slice(0, 600);
}

/**
 * Loads the named models one after another in a child process and runs audio through them.
 * @param languages catalog language codes (what the models may serve)
 */
export function probeModels(modelsDir: string, names: readonly string[], languages: readonly string[], timeoutMs = 120_000): Promise<ModelProbe[]> {
  if (names.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...childCommand(), modelsDir, languages.join(','), ...names], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ok = new Set([...stdout.matchAll(/^ok (.+)$/gm)].map((match) => match[1]!));
      const refused = new Map([...stdout.matchAll(/^failed ([^\t]+)\t(.*)$/gm)].map((match) => [match[1]!, match[2]!]));
      const reached = new Set([...stdout.matchAll(/^probing (.+)$/gm)].map((match) => match[1]!));
      const ending = timedOut
        ? `did not finish within ${Math.round(timeoutMs / 1000)} s`
        : signal
          ? `ended the process (signal ${signal})`
          : code === 0
            ? 'ended the check early'
            : `ended the process (exit code ${code})`;
      resolve(
        names.map((name) => {
          if (ok.has(name)) return { name, ok: true, detail: 'loads and decodes in a separate process' };
          const reason = refused.get(name);
          if (reason !== undefined) return { name, ok: false, detail: reason };
          if (!reached.has(name)) return { name, ok: false, detail: 'not checked: an earlier model ended the check' };
          const said = lastWords(stderr);
          return { name, ok: false, detail: `loading it and decoding a second of audio ${ending}${said ? `: ${said}` : ''}` };
        }),
      );
    });
  });
}
