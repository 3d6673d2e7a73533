import type { SwaggerOptions } from '@fastify/swagger';
import { INTERFACE_VERSION } from './capabilities-view.js';

/**
 * The frame of the OpenAPI 3.1 document (`GET /v1/openapi.json`); `@fastify/swagger` fills in
 * every route from the same schemas that validate the requests.
 */
export function openApiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'sprachrohr speech API', version: INTERFACE_VERSION, description: 'Speech synthesis and recognition for Switzerland.' },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ apiKey: [] }],
    },
  };
}
