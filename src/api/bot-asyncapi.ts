/**
 * The AsyncAPI 3.0 document of the bot stream protocols (`GET /v1/bots/asyncapi.json`), beside
 * the realtime one. Unlike that one it describes a server the deployment does not run: a
 * dialplan's `stream` step makes the gateway the WebSocket client of a bot's own URL. The
 * messages are the schemas the gateway checks the bots' messages against
 * (`bots/stream-messages.ts`), so the document cannot drift from what the gateway does.
 */
import { Type } from '@sinclair/typebox';
import { STREAM_PROTOCOLS } from '../bots/stream-messages.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../recordings/webhook-signature.js';

type Mode = keyof typeof STREAM_PROTOCOLS;
type Direction = keyof (typeof STREAM_PROTOCOLS)[Mode];

// Both directions of media mode have a `media` and a `mark` message (Twilio names them so), so
// an id without the direction would name two different messages.
const DIRECTION_ID: Record<Direction, string> = { toBot: 'to_bot', fromBot: 'from_bot' };

/** The id of a message in the document: `media` mode's `start` to the bot is `media_to_bot_start`. */
export function botMessageId(mode: Mode, direction: Direction, name: string): string {
  return `${mode}.${DIRECTION_ID[direction]}.${name}`.replace(/\./g, '_');
}

const SIGNING =
  `When a webhook secret is set (the dialplan file's webhook_secret_env, else SPRACHROHR_WEBHOOK_SECRET), the upgrade request ` +
  `carries ${TIMESTAMP_HEADER}: <unix seconds> and ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 under the secret of "<timestamp>.<url>">, ` +
  `url being the bot's URL the gateway connects to, as the stream step names it. It is the signature of the webhook requests with ` +
  `the URL in place of the body: a WebSocket upgrade has no body, and signing the URL binds the signature to this bot. The ` +
  `timestamp is signed too, so that a bot can refuse an old upgrade replayed. Without a secret the headers are absent.`;

const CHANNELS: Record<Mode, { title: string; description: string; externalDocs?: object }> = {
  media: {
    title: 'media mode: Twilio Media Streams',
    description:
      "Twilio's bidirectional Media Streams protocol (<Connect><Stream>), field by field, so a bot written for Twilio works " +
      'unchanged. The gateway sends connected, start, then media every 20 ms (the caller: µ-law, 8000 Hz, mono, 160 bytes ' +
      'base64-encoded per message), dtmf for each key, mark when audio the bot sent before a mark has been played, and stop ' +
      'last. The bot sends media (µ-law 8000 Hz mono, base64, any length, played in order), mark and clear. Values Twilio ' +
      'sends as strings (sequenceNumber, chunk, timestamp) are strings here too.',
    externalDocs: { description: "Twilio's description of the messages", url: 'https://www.twilio.com/docs/voice/media-streams/websocket-messages' },
  },
  text: {
    title: 'text mode: transcripts out, text to speak in',
    description:
      'The gateway recognises the caller and speaks for the bot: it sends session.start, speech_started when the caller starts ' +
      'speaking, transcript.partial and transcript.final, dtmf, say.done for each say, transfer.result when a transfer failed, ' +
      'error for a message it could not take, and session.end last. The bot sends say (queued in order), clear, transfer and ' +
      'hangup. Frame names follow the realtime API (transcript.partial, …).',
  },
};

/**
 * The AsyncAPI document of both `stream` modes. Operations are the bot's: it `receive`s what
 * the gateway sends and `send`s what the gateway takes, as a bot's author implements it.
 */
export function botStreamAsyncApiDocument(interfaceVersion: string): object {
  const messages: Record<string, object> = {};
  const channels: Record<string, object> = {};
  const operations: Record<string, object> = {};
  for (const [mode, protocol] of Object.entries(STREAM_PROTOCOLS) as Array<[Mode, (typeof STREAM_PROTOCOLS)[Mode]]>) {
    const channel = `${mode}_stream`;
    const channelMessages: Record<string, object> = {};
    for (const direction of ['toBot', 'fromBot'] as const) {
      const list = protocol[direction];
      for (const [name, payload] of Object.entries(list)) {
        const id = botMessageId(mode, direction, name);
        const summary = typeof payload.description === 'string' ? { summary: payload.description } : {};
        messages[id] = { name, title: name, ...summary, contentType: 'application/json', payload };
        channelMessages[id] = { $ref: `#/components/messages/${id}` };
      }
      operations[`${mode}_${DIRECTION_ID[direction]}`] = {
        action: direction === 'toBot' ? 'receive' : 'send',
        channel: { $ref: `#/channels/${channel}` },
        summary: direction === 'toBot' ? 'What the bot receives from the gateway' : 'What the bot sends to the gateway',
        messages: Object.keys(list).map((name) => ({ $ref: `#/channels/${channel}/messages/${botMessageId(mode, direction, name)}` })),
      };
    }
    channels[channel] = {
      // The whole address is the bot's: the server's host and this path together are the
      // stream step's url, nothing of this deployment.
      address: '{path}',
      ...CHANNELS[mode],
      servers: [{ $ref: '#/servers/bot' }],
      parameters: {
        path: {
          description: "the path (and query, if any) of the stream step's url, exactly as the dialplan writes it",
          examples: ['/media-stream', '/bot/ws?tenant=7'],
        },
      },
      messages: channelMessages,
      bindings: {
        ws: {
          bindingVersion: '0.1.0',
          method: 'GET',
          headers: Type.Object(
            {
              [TIMESTAMP_HEADER]: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'unix seconds the signature was made at' })),
              [SIGNATURE_HEADER]: Type.Optional(Type.String({ pattern: '^sha256=[0-9a-f]{64}$', description: 'HMAC-SHA256 of "<timestamp>.<url>"' })),
            },
            { description: 'on the upgrade request, only when a webhook secret is set' },
          ),
        },
      },
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'sprachrohr bot stream protocols',
      version: interfaceVersion,
      description:
        "A dialplan's stream step connects the call to a bot's WebSocket: the bot is the WebSocket server, at the url the step " +
        'names, and the gateway is the client that connects to it when the call reaches the step, once per stream. Two modes: ' +
        "media (Twilio's Media Streams protocol, the caller's audio as µ-law 8000 Hz in 20 ms frames, audio back) and text " +
        "(transcripts out, text to speak in). The operations are described from the bot's point of view: the bot receives " +
        'the messages the gateway sends and sends the ones the gateway takes. Every message is one JSON object in one text ' +
        'frame, both ways. No subprotocol is needed: the bot accepts the upgrade without selecting one. ' +
        SIGNING,
    },
    defaultContentType: 'application/json',
    servers: {
      bot: {
        host: '{bot}',
        protocol: 'wss',
        title: "The bot's WebSocket server",
        description:
          "The bot, not this deployment: host and port of the stream step's url (wss:// or ws://, as the url says). " +
          'The gateway connects to it as a WebSocket client.',
        variables: { bot: { description: "host[:port] of the stream step's url", examples: ['bot.example.ch', 'bot.example.ch:8443'] } },
        security: [{ $ref: '#/components/securitySchemes/webhookSignature' }],
      },
    },
    channels,
    operations,
    components: {
      messages,
      securitySchemes: {
        webhookSignature: { type: 'httpApiKey', name: SIGNATURE_HEADER, in: 'header', description: SIGNING },
      },
    },
  };
}
