/**
 * The messages of a `stream` bot's WebSocket, both ways, as schemas: the gateway checks what a
 * bot sends against them, and the AsyncAPI document of the bot protocols is made from them, so
 * the two cannot drift apart.
 *
 * `media` mode is Twilio's Media Streams protocol (bidirectional, `<Connect><Stream>`), field by
 * field: every value Twilio sends as a string (sequenceNumber, chunk, timestamp) is a string
 * here too, so a bot written for Twilio works unchanged. `text` mode is our own: transcripts
 * out, text to speak in, named like the realtime API's frames (`transcript.partial`, …), but for
 * `speech_started`, the name the bot protocol was specified with and bots are written against.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const StreamSid = Type.String({ description: 'the stream: "MZ" and 32 hex digits, new for each stream step' });
const SequenceNumber = Type.String({ pattern: '^[1-9][0-9]*$', description: 'counts the messages sent after connected, from "1"' });

/** What the gateway sends to a `media` bot (Twilio's messages "from Twilio"). */
export const MEDIA_OUT = {
  connected: Type.Object(
    { event: Type.Literal('connected'), protocol: Type.Literal('Call'), version: Type.Literal('1.0.0') },
    { description: 'The first message, as soon as the WebSocket is open.' },
  ),
  start: Type.Object(
    {
      event: Type.Literal('start'),
      sequenceNumber: SequenceNumber,
      start: Type.Object({
        streamSid: StreamSid,
        accountSid: Type.String({ description: '"AC" and 32 hex digits, the same for every call of a dialplan route' }),
        callSid: Type.String({ description: '"CA" and 32 hex digits, derived from the SIP Call-ID (the same for every stream of a call)' }),
        tracks: Type.Array(Type.Literal('inbound'), { description: "the caller's audio only, as Twilio sends on a bidirectional stream" }),
        customParameters: Type.Record(Type.String(), Type.String(), { description: "the step's parameters, placeholders filled" }),
        mediaFormat: Type.Object({
          encoding: Type.Literal('audio/x-mulaw'),
          sampleRate: Type.Literal(8000),
          channels: Type.Literal(1),
        }),
      }),
      streamSid: StreamSid,
    },
    { description: 'Once, after connected: the stream, the call and the audio format.' },
  ),
  media: Type.Object(
    {
      event: Type.Literal('media'),
      sequenceNumber: SequenceNumber,
      media: Type.Object({
        track: Type.Literal('inbound'),
        chunk: Type.String({ description: 'counts the media messages, from "1"' }),
        timestamp: Type.String({ description: 'milliseconds since the stream started' }),
        payload: Type.String({ contentEncoding: 'base64', description: '20 ms of the caller: 160 bytes of µ-law, 8000 Hz, mono, no header' }),
      }),
      streamSid: StreamSid,
    },
    { description: "Every 20 ms: the caller's audio (silence while the caller is on hold is not sent)." },
  ),
  dtmf: Type.Object(
    {
      event: Type.Literal('dtmf'),
      streamSid: StreamSid,
      sequenceNumber: SequenceNumber,
      dtmf: Type.Object({ track: Type.Literal('inbound_track'), digit: Type.String({ pattern: '^[0-9*#A-D]$' }) }),
    },
    { description: 'A key the caller pressed (RFC 4733, SIP INFO or in-band).' },
  ),
  mark: Type.Object(
    {
      event: Type.Literal('mark'),
      sequenceNumber: SequenceNumber,
      streamSid: StreamSid,
      mark: Type.Object({ name: Type.String() }),
    },
    { description: "The bot's mark, sent back once the audio the bot sent before it has been played to the caller, or when clear dropped it." },
  ),
  stop: Type.Object(
    {
      event: Type.Literal('stop'),
      sequenceNumber: SequenceNumber,
      streamSid: StreamSid,
      stop: Type.Object({ accountSid: Type.String(), callSid: Type.String() }),
    },
    { description: 'The last message: the caller hung up or the call was transferred. The gateway then closes the socket (1000).' },
  ),
} as const;

/** What a `media` bot may send (Twilio's messages "to Twilio"); `streamSid` is not checked. */
export const MEDIA_IN = {
  media: Type.Object(
    {
      event: Type.Literal('media'),
      streamSid: Type.Optional(Type.String()),
      media: Type.Object({
        payload: Type.String({
          contentEncoding: 'base64',
          minLength: 4,
          maxLength: 700_000,
          description: 'µ-law, 8000 Hz, mono, no header, any length up to 64 s; played in the order sent',
        }),
      }),
    },
    { description: 'Audio to play to the caller, queued after what is already queued.' },
  ),
  mark: Type.Object(
    {
      event: Type.Literal('mark'),
      streamSid: Type.Optional(Type.String()),
      mark: Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) }),
    },
    { description: 'A mark after the audio sent so far: it comes back once that audio has been played.' },
  ),
  clear: Type.Object(
    { event: Type.Literal('clear'), streamSid: Type.Optional(Type.String()) },
    { description: 'Drops every queued audio at once (the caller hears nothing more of it from the next frame); pending marks come back.' },
  ),
} as const;

const Word = Type.Object({
  w: Type.String(),
  start: Type.Number({ description: "seconds from the utterance's start" }),
  end: Type.Number(),
  conf: Type.Number({ minimum: 0, maximum: 1 }),
});

/** What the gateway sends to a `text` bot. */
export const TEXT_OUT = {
  'session.start': Type.Object(
    {
      type: Type.Literal('session.start'),
      call: Type.Object({
        id: Type.String({ description: 'the SIP Call-ID' }),
        caller: Type.String(),
        called: Type.String(),
        route: Type.String({ description: "the dialplan route's number" }),
      }),
      language: Type.String({ description: 'what the caller is recognised in, and the default language of say' }),
      voice: Type.String(),
      dialect: Type.Union([Type.String(), Type.Null()]),
      parameters: Type.Record(Type.String(), Type.String(), { description: "the step's parameters, placeholders filled" }),
      variables: Type.Record(Type.String(), Type.String(), { description: "the call's dialplan variables" }),
    },
    { description: 'The first message, as soon as the WebSocket is open.' },
  ),
  speech_started: Type.Object(
    { type: Type.Literal('speech_started'), at_ms: Type.Integer({ description: 'milliseconds since the stream started' }) },
    { description: 'The caller started speaking (60 ms of voice). A say with barge_in has already been stopped.' },
  ),
  'transcript.partial': Type.Object(
    { type: Type.Literal('transcript.partial'), text: Type.String(), lang: Type.String(), words: Type.Array(Word) },
    { description: "The recogniser's current guess at the caller's utterance." },
  ),
  'transcript.final': Type.Object(
    {
      type: Type.Literal('transcript.final'),
      text: Type.String(),
      lang: Type.String(),
      confidence: Type.Number({ minimum: 0, maximum: 1, description: 'duration-weighted over the words' }),
      words: Type.Array(Word),
    },
    { description: "The caller's utterance, once the caller paused (end_silence_ms)." },
  ),
  dtmf: Type.Object({ type: Type.Literal('dtmf'), digit: Type.String({ pattern: '^[0-9*#A-D]$' }) }, { description: 'A key the caller pressed.' }),
  'say.done': Type.Object(
    {
      type: Type.Literal('say.done'),
      id: Type.Union([Type.String(), Type.Null()]),
      interrupted: Type.Boolean({
        description: 'the caller barged in, or clear or a transfer stopped it before its end (false: the caller heard all of it)',
      }),
      played_seconds: Type.Number({ description: 'how much of it reached the caller' }),
    },
    { description: 'A say has been played (or stopped); one for every say, in order.' },
  ),
  'transfer.result': Type.Object(
    {
      type: Type.Literal('transfer.result'),
      result: Type.Union([Type.Literal('busy'), Type.Literal('no_answer'), Type.Literal('refused'), Type.Literal('failed')]),
      status: Type.Union([Type.Integer(), Type.Null()], { description: 'the SIP status behind it, when there was one' }),
    },
    { description: 'A transfer that did not work; the call stays with the bot. A transfer that worked ends the session.' },
  ),
  error: Type.Object(
    {
      type: Type.Literal('error'),
      code: Type.Union([Type.Literal('invalid_message'), Type.Literal('invalid_say')]),
      detail: Type.String(),
    },
    { description: 'A message the gateway could not take; it was ignored and the call goes on.' },
  ),
  'session.end': Type.Object(
    {
      type: Type.Literal('session.end'),
      reason: Type.Union([Type.Literal('hangup'), Type.Literal('transferred'), Type.Literal('bot_hangup')], {
        description: 'hangup: the caller hung up; transferred: a transfer worked; bot_hangup: the bot ended the call',
      }),
    },
    { description: 'The last message; the gateway then closes the socket (1000).' },
  ),
} as const;

/** What a `text` bot may send; a field the gateway does not know is refused (a typo would otherwise go unnoticed). */
export const TEXT_IN = {
  say: Type.Object(
    {
      type: Type.Literal('say'),
      text: Type.String({ minLength: 1, maxLength: 5000, description: 'plain text or a <speak> document' }),
      voice: Type.Optional(Type.String({ minLength: 1 })),
      language: Type.Optional(Type.String({ minLength: 2 })),
      dialect: Type.Optional(Type.String({ minLength: 1 })),
      dialect_text: Type.Optional(
        Type.Boolean({ default: false, description: 'written in the Swiss German dialect already: pronounced, not rendered (de-CH only)' }),
      ),
      barge_in: Type.Optional(Type.Boolean({ default: true, description: "the caller's speech or a key stops it" })),
      id: Type.Optional(Type.String({ maxLength: 256, description: 'given back in say.done' })),
    },
    { additionalProperties: false, description: 'Speaks text after whatever is being said (says are queued in order).' },
  ),
  clear: Type.Object(
    { type: Type.Literal('clear') },
    {
      additionalProperties: false,
      description:
        'Stops what is being said and drops the queued says (each gets its say.done): every say sent before it, even one sent just before that has not begun to play.',
    },
  ),
  transfer: Type.Object(
    {
      type: Type.Literal('transfer'),
      target: Type.String({ minLength: 1, maxLength: 300, description: 'a SIP URI or a number' }),
      mode: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('refer'), Type.Literal('bridge')])),
    },
    { additionalProperties: false, description: 'Hands the caller to a person, as the transfer step does; what is being said stops first.' },
  ),
  hangup: Type.Object(
    { type: Type.Literal('hangup'), reason: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\r\\n]*$' })) },
    { additionalProperties: false, description: 'Ends the call once what is queued has been said.' },
  ),
} as const;

export type MediaIn = { [K in keyof typeof MEDIA_IN]: Static<(typeof MEDIA_IN)[K]> }[keyof typeof MEDIA_IN];
export type TextIn = { [K in keyof typeof TEXT_IN]: Static<(typeof TEXT_IN)[K]> }[keyof typeof TEXT_IN];
export type MediaOut = { [K in keyof typeof MEDIA_OUT]: Static<(typeof MEDIA_OUT)[K]> }[keyof typeof MEDIA_OUT];
export type TextOut = { [K in keyof typeof TEXT_OUT]: Static<(typeof TEXT_OUT)[K]> }[keyof typeof TEXT_OUT];

/** Both modes' messages by direction, for the AsyncAPI document. */
export const STREAM_PROTOCOLS: Record<'media' | 'text', { readonly toBot: Record<string, TSchema>; readonly fromBot: Record<string, TSchema> }> = {
  media: { toBot: MEDIA_OUT, fromBot: MEDIA_IN },
  text: { toBot: TEXT_OUT, fromBot: TEXT_IN },
};
