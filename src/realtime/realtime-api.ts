/**
 * The realtime API as a fastify plugin: the WebSocket upgrades of `/v1/tts/stream` and
 * `/v1/stt/stream` with their own hooks. The key may come as a header, a subprotocol or a
 * query parameter; a session is refused while the instance drains (503) or while the event loop
 * is late for the open ones (`host_load`), and holds its admission slot until its socket closes.
 */
import type { FastifyPluginAsync } from 'fastify';
import { familyOf } from '../api/request-context.js';
import { checkSandboxMode } from '../api/sandbox-mode.js';
import type { AppServices } from '../api/services.js';
import { authenticate } from '../auth/authenticate.js';
import { ApiError } from '../api/errors.js';
import { HostLoad } from './host-load.js';
import { presentedRealtimeKey } from './realtime-key.js';
import { installWebSockets, registerRealtimeRoutes, setUpgradeHeaders } from './realtime-routes.js';

/** Registers the WebSocket plugin, the realtime routes and the hooks that admit their sessions. */
export const realtimeApi: FastifyPluginAsync<{ services: AppServices }> = async (app, { services }) => {
  // First: its hook marks upgrade requests before the authentication hook can refuse them, so
  // a refused handshake's socket is closed after the answer.
  await installWebSockets(app);
  // Refuses new realtime sessions while the event loop is already late for the open ones.
  const hostLoad = new HostLoad(services.config.realtimeMaxLoopDelayMs);
  app.addHook('onClose', async () => hostLoad.close());

  app.addHook('onRequest', async (request) => {
    const settings = request.routeOptions.config?.sprachrohr;
    if (!settings?.realtime) return;
    const family = familyOf(request);
    services.drain.refuse(family, 'realtime sessions');
    request.principal = await authenticate(services.keys, presentedRealtimeKey(request.headers, request.url), family);
    checkSandboxMode(request, request.principal, family);
    // A plain GET would hold a session slot for as long as its keep-alive connection lives.
    if (!request.ws)
      throw ApiError.of(
        family,
        'invalid_request',
        `${request.url.split('?')[0]} is a WebSocket endpoint: connect with an upgrade request (subprotocol speech.v1)`,
      );
    if (hostLoad.overloaded) throw ApiError.of(family, 'capacity', 'host_load', { retryAfterSeconds: 2, headers: { 'X-Speech-Capacity-Reason': 'host_load' } });
    // A session holds its slot until its socket closes, however long that is.
    let release: (() => void) | null = null;
    let closed = false;
    request.raw.socket.once('close', () => {
      closed = true;
      release?.();
    });
    if (request.raw.socket.destroyed) closed = true;
    release = await services.realtimeAdmission.admit(request.principal, family);
    // A socket that closed while the slot was being taken gives it back at once.
    if (closed) release();
    setUpgradeHeaders(request.raw, {
      'X-Speech-Request-Id': request.id,
      'X-Speech-Environment': request.principal.environment,
      ...(request.principal.keyStatus ? { 'X-Speech-Key-Status': request.principal.keyStatus } : {}),
    });
  });

  registerRealtimeRoutes(app, services);
};
