/**
 * Loads `dialplans/*.yaml` at start: YAML syntax, the schema, catalog voices and languages,
 * `goto` targets and duplicate routes are all checked, and the first problem stops the start
 * with the file, line and column where it is.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import { findLanguage } from '../catalog/languages.js';
import { findVoice } from '../catalog/voices.js';
import { DialplanFileSchema, DialplanRouteSchema, DialplanStepSchema, type DialplanFile, type DialplanRoute, type DialplanStep } from './dialplan-schema.js';

/** A problem in a dialplan file, with where it is. */
export class DialplanError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly problem: string,
  ) {
    super(`${file}:${line}:${column}: ${problem}`);
    this.name = 'DialplanError';
  }
}

/** A route with the file it came from. */
export interface LoadedRoute extends DialplanRoute {
  readonly file: string;
}

const STEP_KINDS = ['answer', 'say', 'listen', 'hangup', 'goto'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** The kind of a step (the one of its keys that names an action). */
export function stepKind(step: DialplanStep): StepKind {
  return STEP_KINDS.find((kind) => kind in step)!;
}

const ajv = new Ajv({ allErrors: false, strict: false });
// Files and routes are checked level by level, so an error is reported where it is.
const validateFileShell = ajv.compile({ ...DialplanFileSchema, properties: { ...DialplanFileSchema.properties, routes: { type: 'array', minItems: 1 } } });
// Steps are checked one kind at a time: an error against the union would name every kind.
const stepValidators = new Map<StepKind, ValidateFunction>(
  STEP_KINDS.map((kind) => [kind, ajv.compile(DialplanStepSchema.anyOf.find((schema) => kind in schema.properties)!)]),
);
const validateRouteShell = ajv.compile({
  ...DialplanRouteSchema,
  properties: { ...DialplanRouteSchema.properties, steps: { type: 'array', minItems: 1, maxItems: 200 } },
});

/** Every route of every dialplan, and the choice of route for a called number. */
export class Dialplans {
  constructor(readonly routes: readonly LoadedRoute[]) {}

  /** The route for a called number: an exact number first, then the longest prefix, then `*`. */
  route(calledNumber: string): LoadedRoute | null {
    const exact = this.routes.find((route) => route.number === calledNumber);
    if (exact) return exact;
    const prefixes = this.routes.filter((route) => route.number.endsWith('*') && route.number !== '*' && calledNumber.startsWith(route.number.slice(0, -1)));
    prefixes.sort((a, b) => b.number.length - a.number.length);
    return prefixes[0] ?? this.routes.find((route) => route.number === '*') ?? null;
  }
}

/** Reads every `.yaml`/`.yml` file of a folder (sorted by name). */
export async function loadDialplans(directory: string): Promise<Dialplans> {
  let names: string[];
  try {
    names = (await fs.readdir(directory)).filter((name) => /\.ya?ml$/.test(name)).sort();
  } catch (error) {
    throw new DialplanError(directory, 0, 0, `the dialplan folder cannot be read: ${(error as Error).message}`);
  }
  const routes: LoadedRoute[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const file = path.join(directory, name);
    for (const route of parseDialplan(file, await fs.readFile(file, 'utf8'))) {
      const earlier = seen.get(route.number);
      if (earlier) throw new DialplanError(file, 0, 0, `the number ${route.number} is routed twice (also in ${earlier})`);
      seen.set(route.number, file);
      routes.push(route);
    }
  }
  return new Dialplans(routes);
}

/** Parses and checks one dialplan file's text. */
export function parseDialplan(file: string, text: string): LoadedRoute[] {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (pathParts: ReadonlyArray<string | number>, problem: string): DialplanError => {
    const position = positionOf(document, lines, pathParts);
    return new DialplanError(file, position.line, position.col, problem);
  };
  const syntax = document.errors[0];
  if (syntax) {
    const position = lines.linePos(syntax.pos[0]);
    throw new DialplanError(file, position.line, position.col, syntax.message.split('\n')[0]!);
  }
  const data = document.toJS() as unknown;
  const failure = (validate: ValidateFunction, value: unknown, base: ReadonlyArray<string | number>): DialplanError | null => {
    if (validate(value)) return null;
    const error = validate.errors![0]!;
    const where = [
      ...base,
      ...error.instancePath
        .split('/')
        .slice(1)
        .map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
    ];
    if (error.keyword === 'additionalProperties') {
      const field = (error.params as { additionalProperty: string }).additionalProperty;
      return at([...where, field], `unknown field ${JSON.stringify(field)}`);
    }
    const detail = `${error.instancePath.split('/').pop() || 'the file'} ${error.message}`;
    return at(where, detail);
  };
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw at([], 'a dialplan is a mapping with name and routes');
  const fileProblem = failure(validateFileShell, data, []);
  if (fileProblem) throw fileProblem;
  const plan = data as DialplanFile;
  return plan.routes.map((route, routeIndex) => {
    const base = ['routes', routeIndex];
    const routeProblem = failure(validateRouteShell, route, base);
    if (routeProblem) throw routeProblem;
    if (!findLanguage(route.language)) throw at([...base, 'language'], `unknown language ${JSON.stringify(route.language)}`);
    if (!findVoice(route.voice)) throw at([...base, 'voice'], `unknown voice ${JSON.stringify(route.voice)}`);
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
      const voiced = 'say' in step ? step.say : 'listen' in step ? step.listen : null;
      if (voiced && 'voice' in voiced && voiced.voice !== undefined && !findVoice(voiced.voice))
        throw at([...where, kinds[0]!, 'voice'], `unknown voice ${JSON.stringify(voiced.voice)}`);
      if (voiced?.language !== undefined && !findLanguage(voiced.language))
        throw at([...where, kinds[0]!, 'language'], `unknown language ${JSON.stringify(voiced.language)}`);
    });
    route.steps.forEach((step, stepIndex) => {
      if ('goto' in step && !ids.has(step.goto)) throw at([...base, 'steps', stepIndex, 'goto'], `goto names no step: ${JSON.stringify(step.goto)}`);
    });
    return { ...route, file };
  });
}

/** Line and column of the node at a path (or of its nearest ancestor that exists). */
function positionOf(document: Document, lines: LineCounter, pathParts: ReadonlyArray<string | number>): { line: number; col: number } {
  for (let length = pathParts.length; length >= 0; length--) {
    const node = document.getIn(pathParts.slice(0, length), true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]);
  }
  return { line: 1, col: 1 };
}
