import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Query strings arrive as text and the app's validator does not coerce (bodies are JSON and
 * must carry their real types), so routes with a query (`limit` as a number) use this one.
 */
const coercing = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, verbose: true });

/** Compiles a route's query schema with type coercion and defaults. */
export const queryValidator: FastifySchemaCompiler<unknown> = ({ schema }) => coercing.compile(schema as object);
