/**
 * The compose files of docker/ (no container engine runs in the tests, so they are read, not
 * started): every SPRACHROHR_* variable a service sets is one the configuration knows, every
 * Dockerfile a service builds from exists, and the cluster's Kamailio gets an address for each
 * instance placeholder of the shipped dispatcher list.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '../../../src/config.js';

const DOCKER = fileURLToPath(new URL('../../../docker/', import.meta.url));
const FILES = readdirSync(DOCKER).filter((name) => /^compose(\.[\w-]+)?\.ya?ml$/.test(name));
const KNOWN = new Set(CONFIG_VARIABLES.map(([name]) => name));

interface Service {
  readonly build?: string | { readonly context?: string; readonly dockerfile?: string };
  readonly environment?: Readonly<Record<string, unknown>> | readonly string[];
}

/** A compose file's services, with YAML merge keys (`<<: *anchor`) applied as Compose applies them. */
function services(file: string): Record<string, Service> {
  const document = parse(readFileSync(join(DOCKER, file), 'utf8'), { merge: true }) as { services?: Record<string, Service> };
  return document.services ?? {};
}

/** The names a service's `environment` sets, in either of its forms (a map, or a list of NAME=value). */
function variables(service: Service): string[] {
  const environment = service.environment ?? {};
  return Array.isArray(environment) ? environment.map((entry: string) => entry.split('=')[0]!) : Object.keys(environment);
}

describe('docker compose files', () => {
  it('are found: the drachtio one and the cluster one', () => {
    expect(FILES).toEqual(expect.arrayContaining(['compose.yaml', 'compose.cluster.yaml']));
  });

  it.each(FILES)('%s sets only SPRACHROHR_* variables the configuration knows', (file) => {
    const unknown = Object.entries(services(file)).flatMap(([name, service]) =>
      variables(service)
        .filter((variable) => variable.startsWith('SPRACHROHR_') && !KNOWN.has(variable))
        .map((variable) => `${name}: ${variable}`),
    );
    expect(unknown).toEqual([]);
  });

  it.each(FILES)('%s builds from Dockerfiles that exist', (file) => {
    for (const [name, service] of Object.entries(services(file))) {
      if (service.build === undefined) continue;
      const build = typeof service.build === 'string' ? { context: service.build } : service.build;
      const context = resolve(DOCKER, build.context ?? '.');
      expect(existsSync(join(context, build.dockerfile ?? 'Dockerfile')), `${name}: ${build.dockerfile ?? 'Dockerfile'} in ${context}`).toBe(true);
    }
  });

  it('compose.cluster.yaml gives Kamailio an address for every instance of the dispatcher list', () => {
    const list = readFileSync(join(DOCKER, 'kamailio', 'dispatcher.list'), 'utf8');
    const placeholders = [...new Set([...list.matchAll(/^[^#].*\{\{gateway_(\d+)\}\}/gm)].map((match) => `GATEWAY_${match[1]}`))];
    const kamailio = services('compose.cluster.yaml')['kamailio']!;
    expect(placeholders.length).toBeGreaterThanOrEqual(2);
    expect(variables(kamailio)).toEqual(expect.arrayContaining(placeholders));
    // As many instances as the list has lines.
    const gateways = Object.values(services('compose.cluster.yaml')).filter((service) => variables(service).includes('SPRACHROHR_SIP_PORT'));
    expect(gateways).toHaveLength(placeholders.length);
  });
});
