import type { Logger } from 'pino';
import type { EngineRegistry } from '../../engine/registry.js';
import type { KeyService } from '../auth/key-service.js';
import type { Config } from '../config.js';
import type { NoticeMailer } from '../entitlements/notice-mailer.js';
import type { JobService } from '../jobs/job-service.js';
import type { Drain } from '../operations/drain.js';
import type { Readiness } from '../operations/readiness.js';
import type { ServiceMetrics } from '../operations/service-metrics.js';
import type { UsageMeter } from '../metering/usage-meter.js';
import type { RecordingService } from '../recordings/recording-service.js';
import type { Admission } from './admission.js';
import type { TelephonyLink } from './telephony-link.js';

/** Counters of this process, shown in capabilities. */
export interface ProcessStats {
  syntheses: number;
}

/** What the HTTP routes use, created once by the owner of the app. */
export interface AppServices {
  readonly config: Config;
  readonly logger: Logger;
  readonly keys: KeyService;
  readonly engines: EngineRegistry;
  readonly meter: UsageMeter;
  readonly admission: Admission;
  /** The same rules for realtime sessions: opens per minute, sessions per key and per process. */
  readonly realtimeAdmission: Admission;
  readonly stats: ProcessStats;
  /** Voicemail recordings: what calls save and `/v1/recordings` serves. */
  readonly recordings: RecordingService;
  /** Credit notices by e-mail; closed with the service. */
  readonly notices: NoticeMailer;
  /** Asynchronous synthesis jobs; their runner is started and stopped by the service's owner. */
  readonly jobs: JobService;
  /** The phone side's facts (trunks), once it runs. */
  readonly telephony: TelephonyLink;
  /** Refuses new work once the instance is stopping; shared with the phone side. */
  readonly drain: Drain;
  /** What `GET /readyz` answers. */
  readonly readiness: Readiness;
  /** The Prometheus metrics of `GET /metrics`; closed by the services' owner. */
  readonly metrics: ServiceMetrics;
}
