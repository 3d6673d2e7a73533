import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { authenticate } from '../auth/authenticate.js';
import { LIMITS } from '../catalog/limits.js';
import { ApiError } from '../errors.js';
import { INTERFACE_VERSION } from './capabilities-view.js';
import { httpLimits } from './admission.js';
import { BodyArrivals } from './body-arrivals.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './error-handler.js';
import { familyOf, newRequestId, setSpeechHeaders, takeRequestSlot } from './request-context.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerSttRoutes } from './routes/stt.js';
import { registerTtsRoutes } from './routes/tts.js';
import { HostLoad } from '../realtime/host-load.js';
import { presentedRealtimeKey } from '../realtime/realtime-key.js';
import { installWebSockets, registerRealtimeRoutes, setUpgradeHeaders } from '../realtime/realtime-routes.js';
import type { AppServices } from './services.js';

/** The only value `X-Speech-Sandbox-Mode` may carry (spec 5.9). */
const SANDBOX_MODE = 'synthetic';

/**
 * Builds the HTTP API on the given services. The caller owns the services and closes them
 * after the app.
 */
export async function buildApp(services: AppServices): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // Refusals and failures are logged by the error handler; successful requests are not.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: newRequestId,
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    // A backstop behind the body pace (BodyArrivals): the largest upload at the slowest pace
    // allowed, and a minute more. Node checks it every 30 s.
    requestTimeout: services.config.bodyTimeoutMs + Math.ceil(((LIMITS.sttMaxUploadBytes + 256 * 1024) / services.config.bodyMinBytesPerSecond) * 1000) + 60_000,
    // Errors met before a request exists (a malformed request line, headers too large, a
    // Content-Length that is not a number) and a URL that cannot be decoded leave as the envelope too.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true, useDefaults: false } },
  });
  installErrorHandling(app);
  // Only JSON and multipart bodies are part of the API; plain text is refused, not parsed.
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'sprachrohr speech API', version: INTERFACE_VERSION, description: 'Speech synthesis and recognition for Switzerland.' },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(multipart, { limits: { fileSize: LIMITS.sttMaxUploadBytes, files: 1 } });
  await installWebSockets(app);

  const bodies = new BodyArrivals(httpLimits(services.config), { graceMs: services.config.bodyTimeoutMs, minBytesPerSecond: services.config.bodyMinBytesPerSecond });
  app.addHook('onClose', async () => bodies.close());

  // Refuses new realtime sessions while the event loop is already late for the open ones.
  const hostLoad = new HostLoad(services.config.realtimeMaxLoopDelayMs);
  app.addHook('onClose', async () => hostLoad.close());

  app.decorateRequest('principal', null);
  app.decorateRequest('abortSignal');
  app.addHook('onRequest', async (request, reply) => {
    request.principal = null;
    const controller = new AbortController();
    request.abortSignal = controller.signal;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new Error('the client closed the connection'));
    });
    const settings = request.routeOptions.config?.sprachrohr;
    if (!settings || settings.auth === false) return;
    const family = familyOf(request);
    const header = request.headers['x-api-key'];
    const presented = settings.realtime ? presentedRealtimeKey(request.headers, request.url) : Array.isArray(header) ? header[0] : header;
    request.principal = await authenticate(services.keys, presented, family);
    const mode = request.headers['x-speech-sandbox-mode'];
    if (mode !== undefined) {
      if (mode !== SANDBOX_MODE) throw ApiError.of(family, 'invalid_request', `X-Speech-Sandbox-Mode accepts only "${SANDBOX_MODE}"`);
      if (request.principal.environment !== 'sandbox') {
        throw new ApiError('tts.invalid_request', 'X-Speech-Sandbox-Mode: synthetic is only accepted with a sandbox key (sv_test_…); remove it for live traffic');
      }
    }
    if (settings.realtime) {
      // A plain GET would hold a session slot for as long as its keep-alive connection lives.
      if (!request.ws) throw ApiError.of(family, 'invalid_request', `${request.url.split('?')[0]} is a WebSocket endpoint: connect with an upgrade request (subprotocol speech.v1)`);
      if (hostLoad.overloaded) {
        throw ApiError.of(family, 'capacity', 'host_load', { retryAfterSeconds: 2, headers: { 'X-Speech-Capacity-Reason': 'host_load' } });
      }
      // A session holds its slot until its socket closes, however long that is.
      const release = services.realtimeAdmission.admit(request.principal, family);
      request.raw.socket.once('close', release);
      setUpgradeHeaders(request.raw, {
        'X-Speech-Request-Id': request.id,
        'X-Speech-Environment': request.principal.environment,
        ...(request.principal.keyStatus ? { 'X-Speech-Key-Status': request.principal.keyStatus } : {}),
      });
      return;
    }
    // The request counts against the key's rate as it arrives; its in-flight slot waits for
    // its body (preHandler below, or the route's handler where it reads the body itself).
    services.admission.countRequest(request.principal, family);
    if (BodyArrivals.hasBody(request)) bodies.watch(request, reply, request.principal, family);
  });
  app.addHook('preHandler', async (request, reply) => {
    const settings = request.routeOptions.config?.sprachrohr;
    if (!settings || settings.auth === false || settings.realtime || settings.bodyInHandler) return;
    takeRequestSlot(request, reply, services.admission);
  });
  app.addHook('onSend', async (request, reply) => {
    setSpeechHeaders(request, reply);
  });

  registerTtsRoutes(app, services);
  registerSttRoutes(app, services);
  registerRealtimeRoutes(app, services);
  registerDiscoveryRoutes(app, services);
  return app;
}
