import type { OutboundDialer } from '../telephony/outbound/outbound-dialer.js';
import type { TrunkStatus } from '../telephony/trunks/trunk-service.js';

/** What the API can ask of the phone side, which starts after the API does. */
export interface TelephonyFacts {
  readonly sip: 'embedded' | 'drachtio';
  trunks(): TrunkStatus[];
  /** The calls ordered through `POST /v1/calls`. */
  readonly dialer: OutboundDialer;
}

/**
 * The API's line to the phone side: attached once the phone side runs; without it (calls off,
 * or a test app without telephony) there are no trunks and no calls can be placed.
 */
export class TelephonyLink {
  private facts: TelephonyFacts | null = null;

  attach(facts: TelephonyFacts): void {
    this.facts = facts;
  }

  /** Who does the SIP, and the trunks with their registrations. */
  trunks(): { sip: 'embedded' | 'drachtio' | 'off'; trunks: TrunkStatus[] } {
    return this.facts ? { sip: this.facts.sip, trunks: this.facts.trunks() } : { sip: 'off', trunks: [] };
  }

  /** The outbound dialer; null while calls are off. */
  get dialer(): OutboundDialer | null {
    return this.facts?.dialer ?? null;
  }
}
