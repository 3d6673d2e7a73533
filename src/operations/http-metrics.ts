/**
 * Counts every answered HTTP request by method, route pattern and status, and every 429 by
 * its reason, once the answer has gone out (fastify's `onResponse`: after the client has it).
 */
import type { FastifyInstance } from 'fastify';
import { answeredErrorCode } from '../api/error-handler.js';
import type { ServiceMetrics } from './service-metrics.js';

/** Installs the counting hook on the app. */
export function installHttpMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // The pattern, never the raw path: ids in paths would make a series per request.
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    metrics.httpRequests.inc({ method: request.method, route, status: String(status) });
    if (status === 429) metrics.tooManyRequests.inc({ reason: reasonOf(reply.getHeader('x-speech-capacity-reason'), answeredErrorCode(request)) });
  });
}

/** A capacity refusal's reason (spec 7 rule 2), else the code's suffix (`rate_limited`, `entitlement_exhausted` …). */
function reasonOf(capacityReason: unknown, code: string | undefined): string {
  if (typeof capacityReason === 'string') return capacityReason;
  return code?.split('.')[1] ?? 'unknown';
}
