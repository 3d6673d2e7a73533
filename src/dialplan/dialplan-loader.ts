/**
 * Loads `dialplans/*.yaml`: YAML syntax, the schema, catalog voices, languages and dialects,
 * the steps every step names, loops that never wait for the caller, duplicate routes and the
 * webhook secret a file names (`webhook_secret_env`) are all checked, and the first problem is
 * reported with the file, line and column where it is.
 * Steps nothing reaches are warnings.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { findLanguage } from '../catalog/languages.js';
import { findVoice } from '../catalog/voices.js';
import type { Env } from '../config-values.js';
import { DialplanFileSchema, DialplanRouteSchema, STEP_SCHEMAS, type DialplanFile, type DialplanRoute } from './dialplan-schema.js';
import { analyseFlow, referencesOf } from './flow-analysis.js';
import { dialectTextProblem, stepProblems } from './step-checks.js';
import { STEP_KINDS, type StepKind } from './step-kinds.js';
import { isTrunkFile } from '../telephony/trunks/trunk-loader.js';
import { isLexiconFile } from '../speech/lexicon-loader.js';
import { DialplanError, mostTelling, readYamlFile } from './yaml-file.js';

export { DialplanError } from './yaml-file.js';

/** A route with the file it came from. */
export interface LoadedRoute extends DialplanRoute {
  readonly file: string;
  /**
   * The file's own webhook secret, read from the variable its `webhook_secret_env` names; it
   * signs the requests of the route's bots instead of the deployment's. Absent when the
   * file names none. Never log it.
   */
  readonly webhookSecret?: string;
  /** The account the file's calls are metered for (its `account`); absent: the default account. */
  readonly account?: string;
}

/** How dialplans are loaded. */
export interface DialplanLoadOptions {
  /** Where the variables `webhook_secret_env` names are read (default `process.env`). */
  readonly env?: Env;
}

/** Shortest per-dialplan webhook secret accepted: the bar `SPRACHROHR_WEBHOOK_SECRET` must clear too (recordings-config.ts). */
const MIN_SECRET_LENGTH = 32;

export { stepKind, type StepKind } from './step-kinds.js';

const ajv = new Ajv({ allErrors: false, strict: false });
// Files and routes are checked level by level, so an error is reported where it is.
const validateFileShell = ajv.compile({ ...DialplanFileSchema, properties: { ...DialplanFileSchema.properties, routes: { type: 'array', minItems: 1 } } });
// Steps are checked one kind at a time: an error against the union would name every kind.
const stepValidators = new Map<StepKind, ValidateFunction>(STEP_KINDS.map((kind) => [kind, ajv.compile(STEP_SCHEMAS[kind])]));
const validateRouteShell = ajv.compile({
  ...DialplanRouteSchema,
  properties: { ...DialplanRouteSchema.properties, steps: { type: 'array', minItems: 1, maxItems: 200 } },
});

/**
 * What is wrong with the shape of one step given outside a file (a bot's action): its kind and
 * its fields against the schema; null when it is good.
 */
export function stepShapeProblem(step: unknown): string | null {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) return 'an action is an object naming one step kind';
  const kinds = STEP_KINDS.filter((kind) => kind in step);
  if (kinds.length !== 1) return `an action has exactly one of ${STEP_KINDS.join(', ')}`;
  const validate = stepValidators.get(kinds[0]!)!;
  if (validate(step)) return null;
  const error = mostTelling(validate.errors!);
  const where = error.instancePath || `/${kinds[0]}`;
  if (error.keyword === 'additionalProperties')
    return `${where}: unknown field ${JSON.stringify((error.params as { additionalProperty: string }).additionalProperty)}`;
  return `${where} ${error.message}`;
}

/** Every route of every dialplan, and the choice of route for a called number. */
export class Dialplans {
  constructor(
    readonly routes: readonly LoadedRoute[],
    /** What the files allow but is probably a mistake (steps nothing reaches). */
    readonly warnings: readonly DialplanError[] = [],
  ) {}

  /**
   * The route for a called number (and the trunk the call came from, if any): an exact number
   * first, then the longest prefix, then `*`; at each of these a route naming the call's trunk
   * before one that names none. Routes naming another trunk are not considered.
   */
  route(calledNumber: string, trunk: string | null = null): LoadedRoute | null {
    const candidates = this.routes.filter((route) => route.trunk === undefined || route.trunk === trunk);
    const best = (routes: LoadedRoute[]): LoadedRoute | undefined => routes.find((route) => route.trunk !== undefined) ?? routes[0];
    const exact = best(candidates.filter((route) => route.number === calledNumber));
    if (exact) return exact;
    const prefixes = candidates.filter((route) => route.number.endsWith('*') && route.number !== '*' && calledNumber.startsWith(route.number.slice(0, -1)));
    const longest = Math.max(0, ...prefixes.map((route) => route.number.length));
    return best(prefixes.filter((route) => route.number.length === longest)) ?? best(candidates.filter((route) => route.number === '*')) ?? null;
  }
}

/** What makes a route unique: its number, and the trunk it is for. */
export function routeKey(route: { readonly number: string; readonly trunk?: string | undefined }): string {
  return route.trunk === undefined ? route.number : `${route.number}@${route.trunk}`;
}

/** A route's number as messages name it (with its trunk). */
export function describeRoute(route: { readonly number: string; readonly trunk?: string | undefined }): string {
  return route.trunk === undefined ? route.number : `${route.number} (trunk ${route.trunk})`;
}

/** Reads every `.yaml`/`.yml` file of a folder (sorted by name) but the trunk file and the lexicon. */
export async function loadDialplans(directory: string, options: DialplanLoadOptions = {}): Promise<Dialplans> {
  let names: string[];
  try {
    names = (await fs.readdir(directory)).filter((name) => /\.ya?ml$/.test(name) && !isTrunkFile(name) && !isLexiconFile(name)).sort();
  } catch (error) {
    throw new DialplanError(directory, 0, 0, `the dialplan folder cannot be read: ${(error as Error).message}`);
  }
  const routes: LoadedRoute[] = [];
  const warnings: DialplanError[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const file = path.join(directory, name);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      throw new DialplanError(file, 0, 0, `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const checked = checkDialplan(file, text, options);
    warnings.push(...checked.warnings);
    for (const route of checked.routes) {
      const key = routeKey(route);
      const earlier = seen.get(key);
      if (earlier) throw new DialplanError(file, 0, 0, `the number ${describeRoute(route)} is routed twice (also in ${earlier})`);
      seen.set(key, file);
      routes.push(route);
    }
  }
  return new Dialplans(routes, warnings);
}

/** Parses and checks one dialplan file's text; its warnings are dropped (see {@link checkDialplan}). */
export function parseDialplan(file: string, text: string, options: DialplanLoadOptions = {}): LoadedRoute[] {
  return checkDialplan(file, text, options).routes;
}

/** A checked file: its routes, and what is allowed but probably a mistake (steps nothing reaches). */
export interface CheckedDialplan {
  readonly routes: LoadedRoute[];
  readonly warnings: DialplanError[];
}

/**
 * Parses and checks one dialplan file's text.
 * @throws DialplanError at the first problem
 */
export function checkDialplan(file: string, text: string, options: DialplanLoadOptions = {}): CheckedDialplan {
  const { data, at, failure } = readYamlFile(file, text);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw at([], 'a dialplan is a mapping with name and routes');
  const fileProblem = failure(validateFileShell, data, []);
  if (fileProblem) throw fileProblem;
  const plan = data as DialplanFile;
  const webhookSecret = plan.webhook_secret_env === undefined ? undefined : secretOf(plan.webhook_secret_env, options.env ?? process.env, at);
  const warnings: DialplanError[] = [];
  const routes = plan.routes.map((route, routeIndex) => {
    const base = ['routes', routeIndex];
    const routeProblem = failure(validateRouteShell, route, base);
    if (routeProblem) throw routeProblem;
    if (!findLanguage(route.language)) throw at([...base, 'language'], `unknown language ${JSON.stringify(route.language)}`);
    if (!findVoice(route.voice)) throw at([...base, 'voice'], `unknown voice ${JSON.stringify(route.voice)}`);
    const language = findLanguage(route.language)!;
    if (route.dialect !== undefined && !language.dialects.some((dialect) => dialect.id === route.dialect))
      throw at(
        [...base, 'dialect'],
        `${language.code} has no dialect ${JSON.stringify(route.dialect)} (it has ${language.dialects.map((d) => d.id).join(', ')})`,
      );
    const dialectText = route.dialect_text ? dialectTextProblem(language.code, route.dialect) : null;
    if (dialectText) throw at([...base, 'dialect_text'], dialectText);
    const ids = new Set<string>();
    route.steps.forEach((step, stepIndex) => {
      const where = [...base, 'steps', stepIndex];
      const kinds = STEP_KINDS.filter((kind) => step !== null && typeof step === 'object' && kind in step);
      if (kinds.length !== 1) throw at(where, `a step has exactly one of ${STEP_KINDS.join(', ')}`);
      const stepProblem = failure(stepValidators.get(kinds[0]!)!, step, where);
      if (stepProblem) throw stepProblem;
      if (step.id !== undefined) {
        if (ids.has(step.id)) throw at([...where, 'id'], `step id ${JSON.stringify(step.id)} is used twice`);
        ids.add(step.id);
      }
      const problem = stepProblems(step, route)[0];
      if (problem) throw at([...where, ...problem.field], problem.message);
    });
    route.steps.forEach((step, stepIndex) => {
      for (const reference of referencesOf(step))
        if (!ids.has(reference.target))
          throw at([...base, 'steps', stepIndex, ...reference.field], `${reference.field.at(-1)} names no step: ${JSON.stringify(reference.target)}`);
    });
    const flow = analyseFlow(route.steps);
    if (flow.spinningLoop !== null)
      throw at(
        [...base, 'steps', flow.spinningLoop],
        'this step closes a loop in which no step listens (listen, menu, gather or record): the call would go round without the caller',
      );
    for (const index of flow.unreachable) warnings.push(at([...base, 'steps', index], `warning: step ${index + 1} is never reached`));
    return { ...route, file, ...(webhookSecret !== undefined ? { webhookSecret } : {}), ...(plan.account !== undefined ? { account: plan.account } : {}) };
  });
  return { routes, warnings };
}

/**
 * The secret in the variable `name`. The messages name the variable and never show its value:
 * they go to the log and to `dialplan check`'s output.
 * @throws DialplanError at `webhook_secret_env` when the variable is unset, empty or too short
 */
function secretOf(name: string, env: Env, at: (pathParts: ReadonlyArray<string | number>, problem: string) => DialplanError): string {
  const secret = env[name];
  // Empty counts as unset, as for SPRACHROHR_WEBHOOK_SECRET: `NAME=` in an env file sets nothing.
  if (secret === undefined || secret === '') throw at(['webhook_secret_env'], `webhook_secret_env names ${name}, which is not set in the environment`);
  if (secret.length < MIN_SECRET_LENGTH)
    throw at(['webhook_secret_env'], `webhook_secret_env names ${name}, whose value is shorter than ${MIN_SECRET_LENGTH} characters`);
  return secret;
}
