/**
 * Reading what a `stream` bot sends: one JSON text message, checked against its schema in
 * stream-messages.ts (compiled once). A message that cannot be taken comes back as a problem
 * the caller never hears: the bridge logs it (and, in text mode, tells the bot) and goes on.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { MEDIA_IN, TEXT_IN, type MediaIn, type TextIn } from './stream-messages.js';

const ajv = new Ajv({ allErrors: false, strict: false });

function compileAll<T>(schemas: Record<string, TSchema>): Map<string, ValidateFunction<T>> {
  return new Map(Object.entries(schemas).map(([name, schema]) => [name, ajv.compile<T>(schema)]));
}

const mediaValidators = compileAll<MediaIn>(MEDIA_IN);
const textValidators = compileAll<TextIn>(TEXT_IN);

/** A message, or why it was not taken. */
export type Inbound<T> = { readonly message: T } | { readonly problem: string };

function read<T>(data: unknown, isBinary: boolean, key: 'event' | 'type', validators: Map<string, ValidateFunction<T>>): Inbound<T> {
  if (isBinary) return { problem: 'binary messages are not read: send JSON text' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(data));
  } catch {
    return { problem: 'the message is not JSON' };
  }
  const name = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[key] : undefined;
  const validate = typeof name === 'string' ? validators.get(name) : undefined;
  if (!validate) return { problem: `unknown ${key} ${JSON.stringify(name ?? null)}; expected one of ${[...validators.keys()].join(', ')}` };
  if (!validate(parsed)) {
    const error = validate.errors?.[0];
    return { problem: `${name}: ${error?.instancePath || '/'} ${error?.message ?? 'is invalid'}` };
  }
  return { message: parsed };
}

/** A message of a `media` (Twilio) bot: media, mark or clear. */
export function readMediaMessage(data: unknown, isBinary: boolean): Inbound<MediaIn> {
  return read(data, isBinary, 'event', mediaValidators);
}

/** A message of a `text` bot: say, clear, transfer or hangup. */
export function readTextMessage(data: unknown, isBinary: boolean): Inbound<TextIn> {
  return read(data, isBinary, 'type', textValidators);
}
