import os from 'node:os';
import type { Principal } from '../auth/authenticate.js';
import { FORMATS } from '../catalog/formats.js';
import { AUTO_LANGUAGE_CANDIDATES, DEFAULT_LANGUAGE, LANGUAGES } from '../catalog/languages.js';
import { DEFAULT_MODEL, LIMITS, MODELS, OUTPUTS, SANDBOX_CHARACTERS_PER_SECOND } from '../catalog/limits.js';
import { DEFAULT_VOICE, VOICES } from '../catalog/voices.js';
import { errorCatalog } from './errors.js';
import { PREWARM_MAX_PHRASES } from './schemas.js';
import type { AppServices } from './services.js';
import { REALTIME_FRAMES } from './asyncapi.js';

/** Version of the interface description this service implements (spec 9). */
export const INTERFACE_VERSION = '1.5.0';

/** `GET /v1/tts/voices` (spec 4.3): a subset of capabilities. */
export function voicesView(): object {
  return { voices: VOICES, languages: LANGUAGES, formats: FORMATS, default_voice: DEFAULT_VOICE };
}

function synthesisParameters(): object {
  return {
    model: { type: 'string', enum: MODELS, default: DEFAULT_MODEL },
    text: { type: 'string', required: true, max_characters: LIMITS.ttsMaxTextCharacters, markup: 'a text whose first element is <speak> is parsed as markup' },
    voice: { type: 'string', enum: VOICES.map((v) => v.id), default: DEFAULT_VOICE },
    language: { type: 'string', default: DEFAULT_LANGUAGE, compact_form: '<language>-<dialect>, for example de-CH-zurich' },
    dialect: { type: 'string', default: 'standard' },
    speed: { type: 'number', default: 1, range: { min: LIMITS.ttsMinSpeed, max: LIMITS.ttsMaxSpeed } },
    style: { type: 'string', max_characters: LIMITS.ttsMaxStyleCharacters },
    dialect_text: {
      type: 'boolean',
      default: false,
      description: 'the text is already written in the de-CH dialect: pronounced the Swiss way, not rendered from Standard German',
    },
    format: { type: 'string', enum: FORMATS.map((f) => f.id), default: 'mp3' },
    sample_rate_hz: {
      type: 'integer',
      per_format: Object.fromEntries(FORMATS.map((f) => [f.id, { enum: f.sample_rates_hz, default: f.default_sample_rate_hz }])),
    },
    output: { type: 'string', enum: OUTPUTS, default: 'audio' },
    markup_elements: ['speak', 'break', 'say-as', 'sub', 'prosody', 'emphasis', 'lang', 'mark', 'p', 's'],
  };
}

/**
 * `GET /v1/capabilities` (spec 2.7): the catalog plus what is true of this process and of
 * the calling key right now. Sections whose feature is not offered yet say so.
 */
export async function capabilitiesView(services: AppServices, principal: Principal, baseUrl: string): Promise<object> {
  const { config, admission, meter, engines, stats } = services;
  const today = await meter.today(principal, 'tts');
  const keyCeiling = principal.environment === 'sandbox' ? config.sandboxKeyMaxInFlight : config.keyMaxInFlight;
  const wsBase = baseUrl.replace(/^http/, 'ws');
  const engineState = (available: boolean) => (principal.environment === 'sandbox' ? 'synthetic' : available ? 'available' : 'unavailable');
  return {
    api: {
      name: 'sprachrohr speech API',
      version: INTERFACE_VERSION,
      base_url: baseUrl,
      documentation: `${baseUrl}/openapi.json`,
      realtime_documentation: `${baseUrl}/asyncapi.json`,
      bots_documentation: `${baseUrl}/bots/asyncapi.json`,
      specification: `${baseUrl}/openapi.json`,
    },
    authentication: {
      scheme: 'api_key',
      header: 'X-API-Key',
      key_prefixes: { live: 'sv_', sandbox: 'sv_test_' },
      // Browsers cannot set headers on a WebSocket: the key may ride in the subprotocol list.
      websocket: [
        { form: 'header', name: 'X-API-Key' },
        { form: 'subprotocol', value: 'speech.v1, key.<KEY>', selected: 'speech.v1' },
        { form: 'query', name: 'api_key' },
      ],
    },
    environment: principal.environment,
    sandbox: {
      characters_per_second: SANDBOX_CHARACTERS_PER_SECOND,
      audio: 'one sine beep per word, breaks as silence; deterministic, never speech',
      transcript: 'a fixed sentence in the detected language that says it is synthetic, words spread over the real duration',
    },
    text_to_speech: {
      engine: engineState(engines.live.tts !== null),
      models: {
        swift: 'eSpeak NG (embedded): lowest latency, streams about every 100 ms of speech',
        studio: 'a neural voice (Piper/VITS) where one is installed for the voice and language; otherwise the same as swift',
      },
      studio_voices: engines.live.studio?.installed ?? [],
      modes: [
        { id: 'batch', transport: 'https', endpoint: `${baseUrl}/tts`, description: 'Whole text in, whole audio out.' },
        { id: 'realtime', transport: 'websocket', endpoint: `${wsBase}/tts/stream`, description: 'Text in as it is written, audio out sentence by sentence.' },
      ],
      parameters: synthesisParameters(),
      // Not a mode (spec 2.7 knows batch and realtime): an HTTPS endpoint beside them (spec 4.4).
      prewarm: {
        endpoint: `${baseUrl}/tts/prewarm`,
        available: principal.environment === 'live',
        max_phrases: PREWARM_MAX_PHRASES,
        description:
          'Checks phrases like synthesis requests. There is no synthesis cache here, so every phrase is answered skipped: nothing is synthesised or billed. Live keys only.',
      },
      voices: VOICES,
      languages: LANGUAGES,
      formats: FORMATS,
      realtime_protocol: {
        available: true,
        endpoint: `${wsBase}/tts/stream`,
        subprotocol: 'speech.v1',
        client_frames: Object.keys(REALTIME_FRAMES.tts.client),
        server_frames: Object.keys(REALTIME_FRAMES.tts.server),
        transports: ['json', 'binary'],
        streamable_formats: ['pcm16', 'mulaw', 'alaw', 'opus'],
        frame_bytes: '20 ms of audio for pcm16, mulaw and alaw; 512 bytes of the Ogg stream for opus; the last frame may be shorter',
      },
    },
    speech_to_text: {
      engine: engineState(engines.live.stt.engines.length > 0),
      engines: engines.live.stt.engines.map((engine) => ({
        id: engine.id,
        languages: engine.capabilities.languages,
        sample_rates_hz: engine.capabilities.sampleRatesHz,
        vocabulary: engine.capabilities.vocabulary,
      })),
      // How the language among several candidates is found: by an installed identifier, or by
      // comparing the candidates' recognisers' confidence.
      language_detection: engines.live.stt.languageId ? { method: 'identifier', model: engines.live.stt.languageId.id } : { method: 'confidence' },
      voice_activity: engines.live.stt.voiceActivity,
      modes: [
        { id: 'batch', transport: 'https', endpoint: `${baseUrl}/stt`, description: 'Upload a recording, receive the transcript.' },
        {
          id: 'realtime',
          transport: 'websocket',
          endpoint: `${wsBase}/stt/stream`,
          description: 'Audio in as it is spoken, partial and final transcripts out.',
        },
      ],
      realtime_protocol: {
        available: true,
        endpoint: `${wsBase}/stt/stream`,
        subprotocol: 'speech.v1',
        client_frames: Object.keys(REALTIME_FRAMES.stt.client),
        server_frames: Object.keys(REALTIME_FRAMES.stt.server),
        description: `AsyncAPI: ${baseUrl}/asyncapi.json`,
        audio: 'PCM16 little-endian, mono, 16 kHz: base64 in audio.append, or raw binary frames',
        partial_interval_ms: 250,
      },
      parameters: {
        audio: {
          containers: ['wav (pcm 8/16/24/32-bit, float, µ-law, A-law)', 'ogg opus', 'flac'],
          max_bytes: LIMITS.sttMaxUploadBytes,
          max_seconds: LIMITS.sttMaxAudioSeconds,
        },
        lang: { type: 'string', default: DEFAULT_LANGUAGE, auto: AUTO_LANGUAGE_CANDIDATES, separator: ',' },
        vocabulary: {
          type: 'string',
          forms: ['JSON array of strings', 'comma-separated list'],
          max_terms: LIMITS.sttMaxVocabularyTerms,
          max_term_characters: LIMITS.sttMaxVocabularyTermCharacters,
        },
      },
      // What this key can be answered in: live keys get the installed recognisers' languages.
      languages: principal.environment === 'sandbox' ? LANGUAGES : LANGUAGES.filter((language) => engines.live.stt.engineFor(language.code)),
    },
    limits: {
      metering_unit: 'audio_seconds',
      metering_granularity: 'second',
      minimum_billable_unit: null,
      tts_daily_audio_seconds: today.limit,
      tts_max_text_characters: LIMITS.ttsMaxTextCharacters,
      tts_max_audio_seconds: LIMITS.ttsMaxAudioSeconds,
      tts_prewarm_max_phrases: PREWARM_MAX_PHRASES,
      stt_max_upload_bytes: LIMITS.sttMaxUploadBytes,
      stt_max_audio_seconds: LIMITS.sttMaxAudioSeconds,
      requests_per_minute: LIMITS.requestsPerMinute,
      burst_per_second: LIMITS.burstPerSecond,
      realtime_sessions_per_key: principal.environment === 'sandbox' ? config.realtimeSandboxKeyMaxSessions : config.realtimeKeyMaxSessions,
      realtime_sessions_per_process: config.realtimeMaxSessions,
      realtime_session_opens_per_minute: LIMITS.requestsPerMinute,
      realtime_idle_timeout_seconds: config.realtimeIdleTimeoutMs / 1000,
    },
    capacity: { cores: os.availableParallelism(), load_1m: Math.round(os.loadavg()[0]! * 100) / 100, ...admission.snapshot() },
    your_plan: {
      concurrent_requests: keyCeiling,
      source: 'service_default',
      upgrade: 'Ask the operator of this deployment for a higher concurrency ceiling.',
    },
    cache: { enabled: false, hits: 0, misses: stats.syntheses, hit_rate: null, seconds_served_from_cache: 0 },
    usage_today: {
      tts_audio_seconds_used: today.used,
      tts_audio_seconds_limit: today.limit,
      tts_audio_seconds_available: today.available,
    },
    errors: errorCatalog(),
  };
}
