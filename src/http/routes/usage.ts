import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ErrorBodySchema } from '../../api/schemas.js';
import type { AppServices } from '../../api/services.js';
import { UsageQuerySchema, UsageReportSchema, type UsageQuery } from '../../api/usage-schemas.js';
import { entitlementView } from '../../entitlements/entitlement-view.js';
import { usageReport } from '../../usage/usage-report.js';
import { InvalidWindowError, MAX_WINDOW_DAYS, usageWindow } from '../../usage/usage-window.js';
import { queryValidator } from './query-validator.js';

/**
 * `GET /v1/usage` (spec 4.12, 2.9): what the key's account used in a window, read from the
 * ledger. Any key of the account may ask, live or sandbox; sandbox traffic is reported apart
 * and never billed.
 */
export function registerUsageRoutes(app: FastifyInstance, services: AppServices): void {
  app.get<{ Querystring: UsageQuery }>(
    '/v1/usage',
    {
      config: { sprachrohr: { family: 'tts' } },
      validatorCompiler: queryValidator,
      schema: {
        summary: "The account's metered usage",
        description:
          'Audio seconds metered for the account of the key, from the billing ledger: per direction (tts, stt) and mode (batch, realtime), ' +
          'with sandbox traffic apart (never billed), and with granularity=day a breakdown per UTC day. Billable seconds are each ' +
          `line's audio rounded up to the whole second, with no minimum per request. The window may span at most ${MAX_WINDOW_DAYS} days; ` +
          'an invalid window is 400 tts.invalid_request. entitlements lists what the account may use, with used and remaining ' +
          'now (not only in the window).',
        tags: ['account'],
        querystring: UsageQuerySchema,
        response: { 200: UsageReportSchema, '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
      },
    },
    async (request) => {
      const principal = request.principal!;
      let window;
      try {
        window = usageWindow(request.query.from, request.query.to, new Date());
      } catch (error) {
        if (error instanceof InvalidWindowError) throw new ApiError('tts.invalid_request', error.message);
        throw error;
      }
      const [rows, entitlements] = await Promise.all([services.meter.summary(principal.accountId, window), services.meter.entitlementsOf(principal.accountId)]);
      return usageReport(request.id, window, rows, request.query.granularity === 'day', entitlements.map(entitlementView));
    },
  );
}
