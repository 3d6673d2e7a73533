/**
 * Reading a YAML configuration file (dialplans, trunks) so that every problem names its file,
 * line and column: the syntax, then checks against JSON schemas, reported where the value is.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';

/** A problem in a dialplan or trunk file, with where it is. */
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

/** A path into the document: mapping keys and sequence indexes. */
export type YamlPath = ReadonlyArray<string | number>;

/** A parsed file and how to report a problem at a place in it. */
export interface YamlFile {
  /** The document as plain data. */
  readonly data: unknown;
  /** The problem at `path` (or at the nearest of its ancestors that exists). */
  at(path: YamlPath, problem: string): DialplanError;
  /** Where `path` is (or the nearest of its ancestors that exists): `FILE:LINE:COLUMN`. */
  where(path: YamlPath): string;
  /** The problem a schema check finds in `value` (found at `base`), or null when it passes. */
  failure(validate: ValidateFunction, value: unknown, base: YamlPath): DialplanError | null;
}

/**
 * Parses a file's text (duplicate keys refused).
 * @throws DialplanError at the first syntax error
 */
export function readYamlFile(file: string, text: string): YamlFile {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (pathParts: YamlPath, problem: string): DialplanError => {
    const position = positionOf(document, lines, pathParts);
    return new DialplanError(file, position.line, position.col, problem);
  };
  const syntax = document.errors[0];
  if (syntax) {
    const position = lines.linePos(syntax.pos[0]);
    throw new DialplanError(file, position.line, position.col, syntax.message.split('\n')[0]!);
  }
  const failure = (validate: ValidateFunction, value: unknown, base: YamlPath): DialplanError | null => {
    if (validate(value)) return null;
    const error = mostTelling(validate.errors!);
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
    const field = error.instancePath.split('/').pop() || 'the file';
    // A choice of fixed words (mode: auto | refer | bridge) fails as one "const" error per word.
    const choices = validate.errors!.filter((other) => other.keyword === 'const' && other.instancePath === error.instancePath);
    if (error.keyword === 'const' && choices.length > 1)
      return at(where, `${field} must be one of ${choices.map((choice) => (choice.params as { allowedValue: unknown }).allowedValue).join(', ')}`);
    return at(where, `${field} ${error.message}`);
  };
  const where = (pathParts: YamlPath): string => {
    const position = positionOf(document, lines, pathParts);
    return `${file}:${position.line}:${position.col}`;
  };
  return { data: document.toJS() as unknown, at, where, failure };
}

/**
 * The error to report of those a failed check lists: a value of several allowed shapes (a
 * string or an object of tests) fails once per shape, and the one deepest in the value, an
 * unknown field first, says best what is wrong.
 */
export function mostTelling(errors: readonly ErrorObject[]): ErrorObject {
  const depth = (error: ErrorObject): number => error.instancePath.split('/').length + (error.keyword === 'additionalProperties' ? 1 : 0);
  return errors.filter((error) => error.keyword !== 'anyOf').reduce((best, error) => (depth(error) > depth(best) ? error : best), errors[0]!);
}

/** Line and column of the node at a path (or of its nearest ancestor that exists). */
function positionOf(document: Document, lines: LineCounter, pathParts: YamlPath): { line: number; col: number } {
  for (let length = pathParts.length; length >= 0; length--) {
    const node = document.getIn(pathParts.slice(0, length), true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]);
  }
  return { line: 1, col: 1 };
}
