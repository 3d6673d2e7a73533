/**
 * The operator's endpoints, outside the speech API: `GET /healthz` (the process answers),
 * `GET /readyz` (it should get new work), `GET /metrics` (Prometheus text, behind
 * `SPRACHROHR_METRICS_TOKEN` when set) and `POST /v1/admin/drain` (behind
 * `SPRACHROHR_ADMIN_TOKEN`, off without it). None takes an API key, and all are answered while
 * the instance drains.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { AppServices } from '../../api/services.js';
import { bearerMatches } from '../../operations/bearer-token.js';

const operations = { sprachrohr: { family: 'tts' as const, auth: false, operations: true } };

/** Registers the operations endpoints. */
export function registerOperationsRoutes(app: FastifyInstance, services: AppServices): void {
  const { metricsToken, adminToken } = services.config.operations;
  app.get('/healthz', { config: operations, schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: operations, schema: { hide: true } }, async (_request, reply) => {
    const report = await services.readiness.check();
    return reply.status(report.ready ? 200 : 503).send({ status: report.ready ? 'ready' : 'not_ready', reasons: report.reasons });
  });
  app.get('/metrics', { config: operations, schema: { hide: true } }, async (request, reply) => {
    if (metricsToken !== null && !bearerMatches(request.headers.authorization, metricsToken))
      throw new ApiError('tts.unauthenticated', 'GET /metrics needs the header Authorization: Bearer <SPRACHROHR_METRICS_TOKEN>', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
    const text = await services.metrics.text();
    return reply.type(services.metrics.contentType).send(text);
  });
  app.post('/v1/admin/drain', { config: operations, schema: { hide: true } }, async (request, reply) => {
    if (adminToken === null)
      throw new ApiError('tts.forbidden', 'the drain endpoint is off: set SPRACHROHR_ADMIN_TOKEN to use it, or send the process SIGTERM');
    if (!bearerMatches(request.headers.authorization, adminToken))
      throw new ApiError('tts.unauthenticated', 'POST /v1/admin/drain needs the header Authorization: Bearer <SPRACHROHR_ADMIN_TOKEN>', {
        headers: { 'WWW-Authenticate': 'Bearer realm="admin"' },
      });
    const started = services.drain.start('operator');
    const since = services.drain.started!;
    request.log.warn({ started, reason: since.reason }, 'drain requested through POST /v1/admin/drain');
    return reply.status(202).send({
      status: 'draining',
      since: new Date(since.atMs).toISOString(),
      reason: since.reason,
      deadline: new Date(since.atMs + services.config.operations.drainTimeoutMs).toISOString(),
    });
  });
}
