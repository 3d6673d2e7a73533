import type { FastifyInstance, FastifyRequest } from 'fastify';
import { asyncApiDocument } from '../../api/asyncapi.js';
import { botStreamAsyncApiDocument } from '../../api/bot-asyncapi.js';
import { capabilitiesView, INTERFACE_VERSION, voicesView } from '../../api/capabilities-view.js';
import { ErrorBodySchema } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';

/** A Host header that is a host name or address with an optional port, and nothing else. */
const PLAIN_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::\d{1,5})?$/;

/**
 * The public base address with `/v1`: configured (`SPRACHROHR_PUBLIC_BASE_URL`, what a
 * deployment should set), else taken from the request's Host when that is a plain host name
 * or address, else the address the request arrived at. The Host header is the client's to
 * choose: it never puts more than a host and port into the documents.
 */
export function baseUrlOf(request: FastifyRequest, services: AppServices): string {
  if (services.config.publicBaseUrl) return services.config.publicBaseUrl;
  const host = request.host;
  if (PLAIN_HOST.test(host)) return `${request.protocol}://${host}/v1`;
  const local = request.raw.socket;
  const address = local?.localAddress?.includes(':') ? `[${local.localAddress}]` : (local?.localAddress ?? services.config.host);
  return `${request.protocol}://${address}:${local?.localPort ?? services.config.port}/v1`;
}

const discovery = { sprachrohr: { family: 'tts' as const } };
const errors = { '4xx': ErrorBodySchema, '5xx': ErrorBodySchema };

/**
 * `GET /v1/capabilities`, `GET /v1/tts/voices`, `GET /v1/openapi.json`, `GET /v1/asyncapi.json` and
 * `GET /v1/bots/asyncapi.json`.
 */
export function registerDiscoveryRoutes(app: FastifyInstance, services: AppServices): void {
  app.get(
    '/v1/capabilities',
    {
      config: discovery,
      schema: {
        summary: 'Everything this deployment accepts, and its current limits',
        tags: ['discovery'],
        response: { 200: { type: 'object', additionalProperties: true }, ...errors },
      },
    },
    async (request) => capabilitiesView(services, request.principal!, baseUrlOf(request, services)),
  );
  app.get(
    '/v1/tts/voices',
    {
      config: discovery,
      schema: {
        summary: 'Voices, languages and formats',
        tags: ['text-to-speech'],
        response: { 200: { type: 'object', additionalProperties: true }, ...errors },
      },
    },
    async () => voicesView(),
  );
  app.get(
    '/v1/openapi.json',
    {
      config: discovery,
      schema: { summary: 'This OpenAPI 3.1 document', tags: ['discovery'], response: { 200: { type: 'object', additionalProperties: true }, ...errors } },
    },
    async () => app.swagger(),
  );
  app.get(
    '/v1/asyncapi.json',
    {
      config: discovery,
      schema: {
        summary: 'The AsyncAPI 3.0 document of the realtime WebSocket protocols',
        tags: ['discovery'],
        response: { 200: { type: 'object', additionalProperties: true }, ...errors },
      },
    },
    async (request) => asyncApiDocument(baseUrlOf(request, services).replace(/^http/, 'ws'), INTERFACE_VERSION),
  );
  app.get(
    '/v1/bots/asyncapi.json',
    {
      config: discovery,
      schema: {
        summary: "The AsyncAPI 3.0 document of the bot stream protocols (the dialplan's stream step, a bot's own WebSocket)",
        tags: ['discovery'],
        response: { 200: { type: 'object', additionalProperties: true }, ...errors },
      },
    },
    // Nothing in it is this deployment's (the server is the bot), so the request does not matter.
    async () => botStreamAsyncApiDocument(INTERFACE_VERSION),
  );
}
