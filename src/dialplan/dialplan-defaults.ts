/**
 * The defaults of every dialplan field that may be left out: one object, read by the schema
 * (its descriptions, and so `docs/dialplans.md`) and by the steps that run (so the two cannot
 * drift apart).
 */
export const DIALPLAN_DEFAULTS = {
  route: {
    /** `live` engines, or `synthetic` ones for load tests. */
    engines: 'live',
    /** How often a step may send the call back to an earlier step in one call; past it the call ends. */
    max_turns: 20,
  },
  say: {
    /** Caller speech or a key stops the prompt. */
    barge_in: true,
    /** How often the text is spoken in all. */
    repeat: 1,
    /** Silence between two repetitions. */
    pause_ms: 1000,
  },
  listen: {
    speech: true,
    dtmf: true,
    /** No speech or key for this long ends the step. */
    timeout_ms: 5000,
    /** The longest the step listens. */
    max_ms: 15_000,
    /** Keys that end the step. */
    max_digits: 1,
    /**
     * Silence after speech that ends the caller's turn: twelve 20 ms frames, so that the
     * gateway answers within a breath (measured turns: docs/performance.md); 500 or more for
     * free speech, where callers pause mid-sentence.
     */
    end_silence_ms: 240,
  },
  menu: {
    /** Further tries after no input or no match, each after the "sorry" prompt. */
    retries: 2,
    /** No key or word for this long counts as no input. */
    timeout_ms: 5000,
  },
  gather: {
    /** The variable the keys land in. */
    into: 'digits',
    min_digits: 1,
    max_digits: 20,
    /** The key that ends the entry (not part of the result); '' for none. */
    finish_on_key: '#',
    /** No first key for this long counts as no input. */
    timeout_ms: 8000,
    /** No further key for this long ends the entry. */
    inter_digit_timeout_ms: 3000,
    retries: 2,
  },
  transfer: {
    /** `auto`: REFER first, a bridged call when the caller's side refuses it. */
    mode: 'auto',
    /** How long the target may ring before the transfer counts as not answered. */
    ring_timeout_s: 30,
    /** What the caller hears while the target rings in a bridged transfer. */
    waiting: 'ringback',
  },
  record: {
    beep: true,
    /** The longest message. */
    max_seconds: 120,
    /** Silence after the caller spoke that ends the message. */
    end_silence_ms: 4000,
    /** No voice at all for this long ends the step without a message. */
    timeout_ms: 8000,
    /** The key that ends the message; '' for none. */
    finish_on_key: '#',
    /** The variable the recording's id lands in. */
    into: 'recording',
  },
  webhook: {
    /** How a turn is sent; PUT for a bot whose framework routes turns so (the body is the same). */
    method: 'POST',
    /** A bot slower than this for one turn has failed it. */
    timeout_ms: 3000,
    /** Attempts again when the bot cannot be reached at all. */
    retries: 1,
  },
  stream: {
    /** Twilio Media Streams: bots written for Twilio work unchanged. */
    mode: 'media',
    /** A bot that has not accepted the WebSocket by then has failed. */
    connect_timeout_ms: 3000,
  },
  /** What a call hears when its bot fails, per language, unless the step says otherwise. */
  botFailed: {
    de: 'Entschuldigung, es ist ein technisches Problem aufgetreten. Bitte rufen Sie später wieder an.',
    fr: 'Pardon, un problème technique est survenu. Veuillez rappeler plus tard.',
    it: 'Scusi, si è verificato un problema tecnico. Vi preghiamo di richiamare più tardi.',
    en: 'Sorry, something went wrong on our side. Please call again later.',
  },
  /** What a call hears before it is ended because its account's entitlements are used up. */
  usedUp: {
    de: 'Entschuldigung, das Guthaben für diesen Dienst ist aufgebraucht. Auf Wiederhören.',
    fr: 'Pardon, le crédit de ce service est épuisé. Au revoir.',
    it: 'Scusi, il credito di questo servizio è esaurito. Arrivederci.',
    en: 'Sorry, the credit for this service is used up. Goodbye.',
  },
  /** The prompts a menu or gather says on no input / no match, per language, unless the step gives its own. */
  sorry: {
    de: { no_input: 'Entschuldigung, ich habe nichts gehört.', no_match: 'Entschuldigung, das habe ich nicht verstanden.' },
    fr: { no_input: "Pardon, je n'ai rien entendu.", no_match: "Pardon, je n'ai pas compris." },
    it: { no_input: 'Scusi, non ho sentito niente.', no_match: 'Scusi, non ho capito.' },
    en: { no_input: 'Sorry, I did not hear anything.', no_match: 'Sorry, I did not get that.' },
  },
} as const;

/** The default apology of a failed bot for a language code (`de-CH` takes `de`'s; English for others). */
export function botFailedPrompt(language: string): string {
  const base = language.toLowerCase().split('-')[0]! as keyof typeof DIALPLAN_DEFAULTS.botFailed;
  return DIALPLAN_DEFAULTS.botFailed[base] ?? DIALPLAN_DEFAULTS.botFailed.en;
}

/** What a call hears before it is ended for used-up entitlements, for a language code (`de-CH` takes `de`'s; English for others). */
export function usedUpPrompt(language: string): string {
  const base = language.toLowerCase().split('-')[0]! as keyof typeof DIALPLAN_DEFAULTS.usedUp;
  return DIALPLAN_DEFAULTS.usedUp[base] ?? DIALPLAN_DEFAULTS.usedUp.en;
}

/** The default "sorry" prompts for a language code (`de-CH` takes `de`'s; English for others). */
export function sorryPrompts(language: string): { readonly no_input: string; readonly no_match: string } {
  const base = language.toLowerCase().split('-')[0]! as keyof typeof DIALPLAN_DEFAULTS.sorry;
  return DIALPLAN_DEFAULTS.sorry[base] ?? DIALPLAN_DEFAULTS.sorry.en;
}
