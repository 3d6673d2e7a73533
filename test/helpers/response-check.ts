/**
 * Every JSON answer of the app checked against the response schema its route publishes in the
 * OpenAPI document (by status, then `4xx`/`5xx`), formats included: a test app records what
 * does not match and fails at its close.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;
const compiled = new WeakMap<object, ValidateFunction>();

/** The JSON schema a route publishes for `status`, if any. */
function schemaFor(responses: Record<string, unknown> | undefined, status: number): object | null {
  const entry = responses?.[String(status)] ?? responses?.[`${String(status)[0]}xx`] ?? responses?.['default'];
  if (!entry || typeof entry !== 'object') return null;
  const content = (entry as { content?: Record<string, { schema?: object }> }).content;
  if (content) return content['application/json']?.schema ?? null;
  return entry as object;
}

function validatorOf(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    // One Ajv per schema: shared schemas carry their $id, which one Ajv would take only once.
    validate = addFormats(new Ajv({ allErrors: true, strict: false })).compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Checks every JSON answer of `app` from now on; returns the list the violations go to. */
export function checkResponses(app: FastifyInstance): string[] {
  const violations: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/json') || typeof payload !== 'string') return payload;
    const schema = schemaFor(request.routeOptions.schema?.response as Record<string, unknown> | undefined, reply.statusCode);
    if (!schema) return payload;
    const validate = validatorOf(schema);
    if (!validate(JSON.parse(payload))) {
      violations.push(`${request.method} ${request.url} ${reply.statusCode}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    }
    return payload;
  });
  return violations;
}
