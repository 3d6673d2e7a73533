/** The spec's error envelope (section 7), checked as a client reads it. */
import { expect } from 'vitest';

/** The envelope's `error` of a refused answer, after checking its status, code, request id and shape. */
export function expectError(response: { statusCode: number; json: () => unknown; headers: Record<string, unknown> }, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  const body = response.json() as { error: { code: string; message: string; request_id: string; detail: string | null } };
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBe(response.headers['x-speech-request-id']);
  expect(typeof body.error.message).toBe('string');
  expect(Object.keys(body)).toEqual(['error']);
  return body.error;
}
