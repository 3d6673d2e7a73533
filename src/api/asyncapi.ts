/**
 * The AsyncAPI 3.0 document of the realtime protocols (`GET /v1/asyncapi.json`), beside the
 * OpenAPI document of the HTTP API. Frame fields follow spec 6.1 and 6.2; `session.start`
 * takes the synthesis request's own schema, so the two cannot drift apart.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { SynthesisRequestSchema } from './schemas.js';

const WordSchema = Type.Object({ w: Type.String(), start: Type.Number(), end: Type.Number(), conf: Type.Number({ minimum: 0, maximum: 1 }) });
const ErrorBody = { code: Type.String(), message: Type.String(), detail: Type.Union([Type.String(), Type.Null()]), request_id: Type.String() };
const { text: _text, output: _output, ...synthesisFields } = SynthesisRequestSchema.properties;

/** Frames of each protocol, by direction: name → payload schema. */
export const REALTIME_FRAMES: Record<'tts' | 'stt', { client: Record<string, TSchema>; server: Record<string, TSchema> }> = {
  tts: {
    client: {
      'session.start': Type.Object({
        type: Type.Literal('session.start'),
        ...synthesisFields,
        transport: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('binary')])),
      }),
      'text.append': Type.Object({ type: Type.Literal('text.append'), text: Type.String({ description: 'Text, or a whole <speak> document.' }) }),
      'text.flush': Type.Object({ type: Type.Literal('text.flush') }),
      'session.end': Type.Object({ type: Type.Literal('session.end') }),
    },
    server: {
      'session.ready': Type.Object({
        type: Type.Literal('session.ready'),
        request_id: Type.String(),
        voice: Type.String(),
        language: Type.String(),
        dialect: Type.Union([Type.String(), Type.Null()]),
        encoding: Type.String(),
        sample_rate_hz: Type.Integer(),
        frame_bytes: Type.Integer(),
      }),
      'audio.chunk': Type.Object({
        type: Type.Literal('audio.chunk'),
        seq: Type.Integer(),
        encoding: Type.String(),
        sample_rate_hz: Type.Integer(),
        data: Type.String({ contentEncoding: 'base64' }),
      }),
      'segment.done': Type.Object({
        type: Type.Literal('segment.done'),
        characters: Type.Integer(),
        duration_seconds: Type.Number(),
        cache: Type.Literal('miss'),
      }),
      mark: Type.Object({ type: Type.Literal('mark'), name: Type.String(), offset_seconds: Type.Number() }),
      'session.complete': Type.Object({
        type: Type.Literal('session.complete'),
        duration_seconds: Type.Number(),
        frames: Type.Integer(),
        cache: Type.Object({ hits: Type.Integer(), misses: Type.Integer() }),
      }),
      error: Type.Object({ type: Type.Literal('error'), error: Type.Object(ErrorBody) }),
    },
  },
  stt: {
    client: {
      config: Type.Object({
        type: Type.Literal('config'),
        lang: Type.Optional(Type.String({ default: 'de-CH' })),
        vocabulary: Type.Optional(Type.Array(Type.String())),
      }),
      'audio.append': Type.Object({
        type: Type.Literal('audio.append'),
        data: Type.String({ contentEncoding: 'base64', description: 'PCM16 little-endian, mono, 16 kHz.' }),
      }),
      'audio.end': Type.Object({ type: Type.Literal('audio.end') }),
    },
    server: {
      'session.ready': Type.Object({ type: Type.Literal('session.ready'), request_id: Type.String() }),
      'transcript.partial': Type.Object({
        type: Type.Literal('transcript.partial'),
        text: Type.String(),
        words: Type.Array(WordSchema),
        lang: Type.String(),
        duration_s: Type.Number(),
      }),
      'transcript.final': Type.Object({
        type: Type.Literal('transcript.final'),
        text: Type.String(),
        words: Type.Array(WordSchema),
        lang: Type.String(),
        duration_s: Type.Number(),
      }),
      'session.complete': Type.Object({ type: Type.Literal('session.complete'), request_id: Type.String() }),
      error: Type.Object({ type: Type.Literal('error'), ...ErrorBody }),
    },
  },
};

const messageId = (family: string, name: string) => `${family}.${name}`.replace(/\./g, '_');

/** The AsyncAPI document for a deployment's WebSocket base address (`ws(s)://host/v1`). */
export function asyncApiDocument(wsBase: string, interfaceVersion: string): object {
  const url = new URL(wsBase);
  const messages: Record<string, object> = {};
  const channels: Record<string, object> = {};
  const operations: Record<string, object> = {};
  for (const [family, frames] of Object.entries(REALTIME_FRAMES)) {
    const channelMessages: Record<string, object> = {};
    for (const [direction, list] of Object.entries(frames)) {
      for (const [name, payload] of Object.entries(list)) {
        const id = messageId(family, name);
        messages[id] = { name, title: name, contentType: 'application/json', payload };
        channelMessages[id] = { $ref: `#/components/messages/${id}` };
      }
      operations[`${family}_${direction}`] = {
        action: direction === 'client' ? 'receive' : 'send',
        channel: { $ref: `#/channels/${family}_stream` },
        messages: Object.keys(list).map((name) => ({ $ref: `#/channels/${family}_stream/messages/${messageId(family, name)}` })),
      };
    }
    channels[`${family}_stream`] = {
      address: `/v1/${family}/stream`,
      title: family === 'tts' ? 'Realtime synthesis' : 'Realtime recognition',
      description:
        family === 'tts'
          ? 'Text in as it is written, audio out sentence by sentence (spec 4.2, 6.1). With transport binary, audio goes as raw binary frames in order.'
          : 'Audio in as it is spoken (or raw binary PCM16 frames), partial and final transcripts out (spec 4.6, 6.2).',
      messages: channelMessages,
      bindings: { ws: { bindingVersion: '0.1.0', query: Type.Object({ api_key: Type.Optional(Type.String()) }) } },
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'sprachrohr realtime speech API',
      version: interfaceVersion,
      description: 'Realtime synthesis and recognition over WebSocket. Subprotocol speech.v1.',
    },
    servers: {
      service: { host: url.host, pathname: '/', protocol: url.protocol.replace(':', ''), security: [{ $ref: '#/components/securitySchemes/apiKey' }] },
    },
    channels,
    operations,
    components: {
      messages,
      securitySchemes: {
        apiKey: {
          type: 'httpApiKey',
          name: 'X-API-Key',
          in: 'header',
          description: 'Or as a subprotocol "key.<KEY>" beside speech.v1, or as the api_key query parameter.',
        },
      },
    },
  };
}
