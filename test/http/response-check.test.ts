/**
 * The check every test app runs on its JSON answers (test/helpers/response-check.ts): an
 * answer that does not match its route's published schema is caught, by status and by class.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { checkResponses } from '../helpers/response-check.js';

describe('the response check', () => {
  it('records answers that break their schema, and passes those that keep it', async () => {
    const app = Fastify();
    const violations = checkResponses(app);
    const schema = {
      response: {
        200: { type: 'object', properties: { at: { type: 'string', format: 'date-time' } }, required: ['at'] },
        '4xx': { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
      },
    };
    app.get('/good', { schema }, async () => ({ at: '2026-11-25T12:00:00.000Z' }));
    // Sent as a string: the serializer would otherwise fill in what the schema asks for.
    app.get('/bad-format', { schema }, async (_request, reply) => reply.type('application/json').send('{"at":"yesterday"}'));
    app.get('/bad-error', { schema }, async (_request, reply) => reply.code(404).type('application/json').send('{"problem":"gone"}'));
    for (const url of ['/good', '/bad-format', '/bad-error']) await app.inject({ url });
    expect(violations).toHaveLength(2);
    expect(violations[0]).toMatch(/^GET \/bad-format 200: .*format/);
    expect(violations[1]).toMatch(/^GET \/bad-error 404: .*required/);
    await app.close();
  });
});
