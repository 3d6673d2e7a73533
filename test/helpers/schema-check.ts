/** Checks a response body against the schema the OpenAPI document publishes for it, formats included. */
import { Ajv, type AnySchema } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { expect } from 'vitest';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/** Fails the test with every violation when `value` does not match `schema`. */
export function expectSchema(schema: AnySchema, value: unknown): void {
  const validate = ajv.compile(schema);
  const valid = validate(value);
  expect(valid ? [] : validate.errors, 'schema violations').toEqual([]);
}
