/**
 * The realtime transport: WebSocket upgrades on `/v1/tts/stream` and `/v1/stt/stream`
 * (`@fastify/websocket`, on `ws`). Upgrades pass through the same hooks as HTTP requests —
 * one authentication function, admission, the error envelope — so a refused handshake is an
 * ordinary 401/403/429 response before any upgrade.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { AppServices } from '../api/services.js';
import type { RealtimeContext } from './frame-channel.js';
import { KeyWatch } from './key-watch.js';
import { REALTIME_SUBPROTOCOL } from './realtime-key.js';
import { serveSttStream } from './stt-stream.js';
import { serveTtsStream } from './tts-stream.js';

/** Largest client frame (a second of 16 kHz PCM16 is 32 KB; text appends are far smaller). */
const MAX_FRAME_BYTES = 1024 * 1024;

/** Headers the upgrade response carries, set by the request hooks on the raw request. */
const UPGRADE_HEADERS = Symbol('sprachrohr.upgradeHeaders');

type UpgradeRequest = IncomingMessage & { [UPGRADE_HEADERS]?: Record<string, string> };

/** Remembers headers for the `101 Switching Protocols` response of an upgrade. */
export function setUpgradeHeaders(raw: IncomingMessage, headers: Record<string, string>): void {
  (raw as UpgradeRequest)[UPGRADE_HEADERS] = { ...(raw as UpgradeRequest)[UPGRADE_HEADERS], ...headers };
}

/** How long open sessions get to close when the service shuts down, before they are cut. */
const SHUTDOWN_GRACE_MS = 2000;

/**
 * At shutdown: every session is told (close 1001) and given a moment to finish the close
 * handshake; what is left is cut, so the process never waits on a silent client.
 */
async function closeSessions(this: FastifyInstance): Promise<void> {
  const clients = [...this.websocketServer.clients];
  for (const client of clients) client.close(1001, 'the service is shutting down');
  const deadline = Date.now() + SHUTDOWN_GRACE_MS;
  while (clients.some((client) => client.readyState !== client.CLOSED) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  for (const client of clients) if (client.readyState !== client.CLOSED) client.terminate();
}

/**
 * Registers the WebSocket plugin. It goes first: its hook marks upgrade requests before the
 * authentication hook can refuse them, so a refused handshake's socket is closed after the
 * answer.
 */
export async function installWebSockets(app: FastifyInstance): Promise<void> {
  await app.register(websocket, {
    preClose: closeSessions,
    options: {
      maxPayload: MAX_FRAME_BYTES,
      // The key may ride in the subprotocol list; the service answers with speech.v1 alone.
      handleProtocols: (protocols) => (protocols.has(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : false),
    },
  });
  app.websocketServer.on('headers', (headers: string[], request: UpgradeRequest) => {
    for (const [name, value] of Object.entries(request[UPGRADE_HEADERS] ?? {})) headers.push(`${name}: ${value}`);
  });
}

/** Registers the realtime routes (after {@link installWebSockets}). */
export function registerRealtimeRoutes(app: FastifyInstance, services: AppServices): void {
  const keyWatch = new KeyWatch(services.keys, (error) => services.logger.error({ err: error }, 'looking up the keys of open realtime sessions failed'));
  app.addHook('onClose', async () => keyWatch.close());
  const contextOf = (request: FastifyRequest): RealtimeContext => ({
    principal: request.principal!,
    requestId: request.id,
    services,
    keyWatch,
    logger: request.log as unknown as AppServices['logger'],
    transport: request.socket,
  });
  app.get('/v1/tts/stream', { websocket: true, config: { sprachrohr: { family: 'tts', realtime: true } } }, (socket, request) =>
    serveTtsStream(socket, contextOf(request)),
  );
  app.get('/v1/stt/stream', { websocket: true, config: { sprachrohr: { family: 'stt', realtime: true } } }, (socket, request) =>
    serveSttStream(socket, contextOf(request)),
  );
}
