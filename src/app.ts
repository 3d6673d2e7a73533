/**
 * The fastify application: what every request shares (the error envelope, request ids, the
 * speech headers, the OpenAPI document, the client's abort signal), and the two transports as
 * encapsulated plugins with their own hooks: the HTTP API (`http/http-api.ts`) and the realtime
 * API (`realtime/realtime-api.ts`). Neither transport imports the other; both build on the
 * contract in `api/`.
 */
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { openApiOptions } from './api/openapi.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './api/error-handler.js';
import { newRequestId, setSpeechHeaders } from './api/request-context.js';
import type { AppServices } from './api/services.js';
import { LIMITS } from './catalog/limits.js';
import { httpApi } from './http/http-api.js';
import { installDrainGate } from './operations/drain-gate.js';
import { installHttpMetrics } from './operations/http-metrics.js';
import { realtimeApi } from './realtime/realtime-api.js';

/**
 * Builds the API on the given services. The caller owns the services and closes them after
 * the app.
 */
export async function buildApp(services: AppServices): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // Refusals and failures are logged by the error handler; successful requests are not.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: newRequestId,
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    // A backstop behind the body pace (http/body-arrivals.ts): the largest upload at the slowest
    // pace allowed, and a minute more. Node checks it every 30 s.
    requestTimeout:
      services.config.bodyTimeoutMs + Math.ceil(((LIMITS.sttMaxUploadBytes + 256 * 1024) / services.config.bodyMinBytesPerSecond) * 1000) + 60_000,
    // Errors met before a request exists (a malformed request line, headers too large, a
    // Content-Length that is not a number) and a URL that cannot be decoded leave as the envelope too.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true, useDefaults: false } },
  });
  installErrorHandling(app);
  // Only JSON and multipart bodies are part of the API; plain text is refused, not parsed.
  app.removeContentTypeParser('text/plain');
  await app.register(swagger, openApiOptions());

  app.decorateRequest('principal', null);
  app.decorateRequest('abortSignal');
  app.addHook('onRequest', async (request, reply) => {
    request.principal = null;
    const controller = new AbortController();
    request.abortSignal = controller.signal;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new Error('the client closed the connection'));
    });
  });
  app.addHook('onSend', async (request, reply) => {
    setSpeechHeaders(request, reply);
  });
  // Before the transports' hooks: a draining instance refuses before it authenticates.
  installDrainGate(app, services.drain);
  installHttpMetrics(app, services.metrics);
  services.metrics.state.attach({
    httpInFlight: () => services.drain.requestsInFlight,
    realtimeSessions: () => services.realtimeAdmission.snapshot().in_flight,
    draining: () => services.drain.active,
    engineQueues: () => services.engines.load(),
  });

  await app.register(httpApi, { services });
  await app.register(realtimeApi, { services });
  return app;
}
