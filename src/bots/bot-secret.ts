/**
 * Which secret signs a bot's requests: a dialplan may have its own (`webhook_secret_env`, read
 * by the loader), so that the bots of one customer's dialplan cannot check, and so accept,
 * requests made for another's; without one, the deployment's `SPRACHROHR_WEBHOOK_SECRET`.
 */
import type { StepContext } from '../dialplan/steps/step-context.js';

/**
 * The secret a bot request of this call is signed with: the route's own when its dialplan
 * names one, else the deployment's; null when neither is set (the request goes unsigned).
 */
export function botSecret(context: StepContext): string | null {
  return context.route.webhookSecret ?? context.webhookSecret;
}
