import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts the worker module `name` (without extension) that sits beside the module at `base`
 * (pass `import.meta.url`): its compiled JavaScript in production, or its TypeScript source
 * loaded through tsx when the caller itself runs from source (tests, benchmarks).
 */
export function startWorkerThread(base: string, name: string, workerData?: unknown, resourceLimits?: ResourceLimits): Worker {
  const options = { workerData, ...(resourceLimits ? { resourceLimits } : {}) };
  if (base.endsWith('.js')) return new Worker(new URL(`./${name}.js`, base), options);
  const source = new URL(`./${name}.ts`, base).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, { eval: true, ...options });
}
