/**
 * The HTTP side of the drain: every API request is counted while it is answered (the drain
 * waits for them), and a new one is refused with `503 *.unavailable` once the drain has begun.
 * Operations endpoints pass (a load balancer must still read `/readyz`); realtime handshakes
 * are refused by the realtime plugin's own hook, after the WebSocket plugin has marked them,
 * so that a refused handshake's socket is closed after its answer.
 */
import type { FastifyInstance } from 'fastify';
import { familyOf } from '../api/request-context.js';
import type { Drain } from './drain.js';

/** Installs the gate on the app (before the transports, so it runs before authentication). */
export function installDrainGate(app: FastifyInstance, drain: Drain): void {
  app.addHook('onRequest', async (request, reply) => {
    const settings = request.routeOptions.config?.sprachrohr;
    // Unknown paths get their 404 as always; WebSocket sessions are the realtime plugin's.
    if (!settings || settings.operations || settings.realtime) return;
    reply.raw.once('close', drain.admitRequest(familyOf(request)));
  });
}
