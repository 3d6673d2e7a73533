/**
 * The URLs a call order names (its `status_url`, a bot's url) are checked like job callbacks:
 * https to public addresses, or to those `SPRACHROHR_CALLBACK_ALLOW` lets through, so that an
 * API key cannot point the gateway at its own network.
 */
import { CallbackTargetError, checkCallbackTarget, systemResolver, type CallbackAllowList, type Resolver } from '../../jobs/callback-target.js';
import { CallOrderError } from './call-order.js';

/** A check of an order's URLs against `allow`; it throws CallOrderError (`invalid`) with the reason. */
export function orderUrlCheck(allow: CallbackAllowList, resolver: Resolver = systemResolver): (url: string, field: string) => Promise<void> {
  return async (url, field) => {
    try {
      await checkCallbackTarget(url, allow, resolver, field);
    } catch (error) {
      if (error instanceof CallbackTargetError) throw new CallOrderError('invalid', error.message);
      throw error;
    }
  };
}
