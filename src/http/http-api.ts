/**
 * The HTTP API as a fastify plugin: batch synthesis and recognition and the discovery
 * documents, with their own hooks. A request is authenticated and counted against its key's
 * rate as it arrives; its in-flight slot waits for its body (after fastify has parsed it, or in
 * the handler that streams it), while bodies still arriving are bounded and paced.
 */
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync } from 'fastify';
import { httpLimits, rateLimitHeaders } from '../api/admission.js';
import { familyOf, takeRequestSlot } from '../api/request-context.js';
import { checkSandboxMode } from '../api/sandbox-mode.js';
import type { AppServices } from '../api/services.js';
import { authenticate } from '../auth/authenticate.js';
import { LIMITS } from '../catalog/limits.js';
import { BodyArrivals } from './body-arrivals.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerOperationsRoutes } from './routes/operations.js';
import { registerPrewarmRoutes } from './routes/prewarm.js';
import { registerRecordingRoutes } from './routes/recordings.js';
import { registerSttRoutes } from './routes/stt.js';
import { registerTtsRoutes } from './routes/tts.js';
import { registerTrunkRoutes } from './routes/trunks.js';
import { registerCallRoutes } from './routes/calls.js';
import { registerUsageRoutes } from './routes/usage.js';

/** Registers the HTTP routes and the hooks that admit their requests. */
export const httpApi: FastifyPluginAsync<{ services: AppServices }> = async (app, { services }) => {
  await app.register(multipart, { limits: { fileSize: LIMITS.sttMaxUploadBytes, files: 1 } });
  const bodies = new BodyArrivals(httpLimits(services.config), {
    graceMs: services.config.bodyTimeoutMs,
    minBytesPerSecond: services.config.bodyMinBytesPerSecond,
  });
  app.addHook('onClose', async () => bodies.close());

  app.addHook('onRequest', async (request, reply) => {
    const settings = request.routeOptions.config?.sprachrohr;
    if (!settings || settings.auth === false) return;
    const family = familyOf(request);
    const header = request.headers['x-api-key'];
    request.principal = await authenticate(services.keys, Array.isArray(header) ? header[0] : header, family);
    checkSandboxMode(request, request.principal, family);
    // Every answer tells the client where it stands (IETF RateLimit headers); a 429 carries its own.
    void reply.headers(rateLimitHeaders(await services.admission.countRequest(request.principal, family)));
    if (BodyArrivals.hasBody(request)) bodies.watch(request, reply, request.principal, family);
  });
  app.addHook('preHandler', async (request, reply) => {
    const settings = request.routeOptions.config?.sprachrohr;
    if (!settings || settings.auth === false || settings.bodyInHandler) return;
    await takeRequestSlot(request, reply, services.admission);
  });

  registerTtsRoutes(app, services);
  registerPrewarmRoutes(app);
  registerSttRoutes(app, services);
  registerDiscoveryRoutes(app, services);
  registerRecordingRoutes(app, services);
  registerUsageRoutes(app, services);
  registerTrunkRoutes(app, services);
  registerCallRoutes(app, services);
  registerJobRoutes(app, services);
  registerOperationsRoutes(app, services);
};
