import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMessageId, botStreamAsyncApiDocument } from '../../src/api/bot-asyncapi.js';
import { STREAM_PROTOCOLS } from '../../src/bots/stream-messages.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/recordings/webhook-signature.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ url: '/v1/bots/asyncapi.json', headers: { 'x-api-key': t.sandboxKey } })).json();
});
afterAll(async () => t.close());

const MODES = Object.keys(STREAM_PROTOCOLS) as Array<keyof typeof STREAM_PROTOCOLS>;

/** Every `$ref` in a value, with where it sits. */
function refsOf(value: unknown, at = '#'): Array<{ at: string; ref: string }> {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsOf(item, `${at}/${index}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === '$ref' && typeof item === 'string' ? [{ at, ref: item }] : refsOf(item, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}

/** What a local `$ref` points at, or undefined when it points at nothing in the document. */
function resolve(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const token of ref.slice(2).split('/')) {
    const key = decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

describe('GET /v1/bots/asyncapi.json', () => {
  it('is served as JSON to a key, and refused without one', async () => {
    const response = await t.app.inject({ url: '/v1/bots/asyncapi.json', headers: { 'x-api-key': t.sandboxKey } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json().asyncapi).toBe('3.0.0');
    // Served with the same auth as /v1/asyncapi.json.
    const anonymous = await t.app.inject({ url: '/v1/bots/asyncapi.json' });
    expect(anonymous.statusCode).toBe((await t.app.inject({ url: '/v1/asyncapi.json' })).statusCode);
    expect(anonymous.statusCode).toBe(401);
  });

  it('is AsyncAPI 3.0.0 with the interface version, and the same document the function builds', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info.version).toBe(capabilities.api.version);
    expect(doc).toEqual(JSON.parse(JSON.stringify(botStreamAsyncApiDocument(capabilities.api.version))));
    expect(capabilities.api.bots_documentation).toMatch(/^https?:\/\/.+\/v1\/bots\/asyncapi\.json$/);
    expect(capabilities.api.bots_documentation.replace(/\/bots\/asyncapi\.json$/, '')).toBe(capabilities.api.base_url);
  });

  it("has the bot's server, which the gateway connects to, on both channels", () => {
    expect(doc.servers.bot).toMatchObject({ host: '{bot}', protocol: 'wss' });
    expect(doc.servers.bot.variables).toHaveProperty('bot');
    expect(doc.servers.bot.description).toMatch(/connects to it/);
    expect(Object.keys(doc.channels).sort()).toEqual(['media_stream', 'text_stream']);
    for (const channel of Object.values(doc.channels) as any[]) {
      expect(channel.servers).toEqual([{ $ref: '#/servers/bot' }]);
      expect(channel.address).toBe('{path}');
      expect(channel.parameters).toHaveProperty('path');
      expect(Object.keys(channel.bindings.ws.headers.properties).sort()).toEqual([SIGNATURE_HEADER, TIMESTAMP_HEADER].sort());
    }
  });

  it('says how the upgrade is signed, with the webhook header names', () => {
    expect(doc.components.securitySchemes.webhookSignature).toMatchObject({ type: 'httpApiKey', in: 'header', name: SIGNATURE_HEADER });
    for (const text of [doc.info.description, doc.components.securitySchemes.webhookSignature.description]) {
      expect(text).toContain(TIMESTAMP_HEADER);
      expect(text).toContain(`${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256`);
      expect(text).toContain('"<timestamp>.<url>"');
    }
    expect(doc.info.description).toMatch(/No subprotocol/);
    expect(doc.defaultContentType).toBe('application/json');
  });

  it('has every message of both modes, each direction, with its payload', () => {
    let count = 0;
    for (const mode of MODES) {
      const channel = doc.channels[`${mode}_stream`];
      for (const direction of ['toBot', 'fromBot'] as const) {
        for (const [name, schema] of Object.entries(STREAM_PROTOCOLS[mode][direction])) {
          const id = botMessageId(mode, direction, name);
          const message = doc.components.messages[id];
          expect(message, id).toBeDefined();
          expect(message).toMatchObject({ name, contentType: 'application/json' });
          expect(message.payload, id).toEqual(JSON.parse(JSON.stringify(schema)));
          expect(channel.messages[id]).toEqual({ $ref: `#/components/messages/${id}` });
          count++;
        }
      }
      const expected = Object.keys(STREAM_PROTOCOLS[mode].toBot).length + Object.keys(STREAM_PROTOCOLS[mode].fromBot).length;
      expect(Object.keys(channel.messages)).toHaveLength(expected);
    }
    expect(Object.keys(doc.components.messages)).toHaveLength(count);
    // media and mark go both ways in media mode: two messages each, told apart by direction.
    expect(doc.components.messages.media_to_bot_media.payload).not.toEqual(doc.components.messages.media_from_bot_media.payload);
  });

  it("has the bot's operations: it receives what goes to it and sends what comes from it", () => {
    expect(Object.keys(doc.operations).sort()).toEqual(['media_from_bot', 'media_to_bot', 'text_from_bot', 'text_to_bot']);
    for (const mode of MODES) {
      for (const [direction, action] of [
        ['toBot', 'receive'],
        ['fromBot', 'send'],
      ] as const) {
        const operation = doc.operations[`${mode}_${direction === 'toBot' ? 'to_bot' : 'from_bot'}`];
        expect(operation.action).toBe(action);
        expect(operation.channel).toEqual({ $ref: `#/channels/${mode}_stream` });
        // AsyncAPI 3.0: an operation's messages are references to its channel's messages.
        expect(operation.messages.map((m: { $ref: string }) => resolve(doc, m.$ref))).toEqual(
          Object.keys(STREAM_PROTOCOLS[mode][direction]).map((name) => ({ $ref: `#/components/messages/${botMessageId(mode, direction, name)}` })),
        );
        for (const reference of operation.messages) expect(reference.$ref.startsWith(`#/channels/${mode}_stream/messages/`)).toBe(true);
      }
    }
    expect(doc.info.description).toMatch(/bot's point of view/);
  });

  it('resolves every $ref inside the document', () => {
    const refs = refsOf(doc);
    expect(refs.length).toBeGreaterThan(30);
    for (const { at, ref } of refs) expect(resolve(doc, ref), `${at}: ${ref}`).toBeDefined();
    // The probe itself finds a reference that goes nowhere.
    expect(resolve(doc, '#/components/messages/nothing')).toBeUndefined();
  });

  it('says what each mode is', () => {
    expect(doc.channels.media_stream.description).toMatch(/Twilio's bidirectional Media Streams/);
    expect(doc.channels.media_stream.description).toMatch(/µ-law, 8000 Hz/);
    expect(doc.channels.media_stream.description).toMatch(/20 ms/);
    expect(doc.channels.text_stream.description).toMatch(/say/);
  });
});
