/**
 * A recording as the API shows it (snake_case, like every other body of the API), with its
 * schema: the same view answers `GET /v1/recordings/{id}` and fills the webhook's body.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Recording } from './recording.js';

/** A recording in API bodies. */
export const RecordingSchema = Type.Object(
  {
    id: Type.String({ description: 'rec_ and 22 random characters.' }),
    call_id: Type.String({ description: 'The SIP Call-ID of the call that left the message.' }),
    route: Type.String({ description: 'The dialplan route (called number) that recorded it.' }),
    caller: Type.String(),
    called: Type.String(),
    language: Type.String({ description: 'The language the caller was spoken to in; the transcript is made in it.' }),
    created_at: Type.String({ format: 'date-time' }),
    duration_seconds: Type.Number(),
    size_bytes: Type.Integer({ description: 'Size of the WAV file, header included.' }),
    sample_rate_hz: Type.Integer(),
    ended_by: Type.Unsafe<Recording['endedBy']>({ type: 'string', enum: ['silence', 'key', 'max_length', 'hangup'] }),
    transcript: Type.Object({
      status: Type.Unsafe<Recording['transcript']['status']>({
        type: 'string',
        enum: ['pending', 'done', 'unavailable', 'failed'],
        description: 'unavailable: no recogniser for the language is installed.',
      }),
      text: Type.Union([Type.String(), Type.Null()]),
      confidence: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When retention deletes it; null while recordings are kept until deleted.',
    }),
  },
  { $id: 'Recording' },
);

/** The JSON of a recording. */
export type RecordingView = Static<typeof RecordingSchema>;

/** A recording as the API shows it. */
export function recordingView(recording: Recording): RecordingView {
  return {
    id: recording.id,
    call_id: recording.callId,
    route: recording.route,
    caller: recording.caller,
    called: recording.called,
    language: recording.language,
    created_at: recording.createdAt,
    duration_seconds: recording.durationSeconds,
    size_bytes: recording.sizeBytes,
    sample_rate_hz: recording.sampleRateHz,
    ended_by: recording.endedBy,
    transcript: { status: recording.transcript.status, text: recording.transcript.text, confidence: recording.transcript.confidence },
    expires_at: recording.expiresAt,
  };
}
