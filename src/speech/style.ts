import { NEUTRAL_PROSODY, type Prosody } from '../../engine/types.js';

/**
 * How a free-text `style` prompt steers delivery (spec 2.1): words that name a manner, in
 * German, French, Italian or English, each move rate, pitch or level. The prompt never changes
 * the spoken words; a prompt with none of these words changes nothing.
 */
const CUES: ReadonlyArray<{ readonly words: RegExp; readonly change: Partial<Prosody> }> = [
  {
    words: /\b(calm|slow|relaxed|soothing|ruhig|langsam|gelassen|beruhigend|calme|lent|lentement|doucement|calmo|lento|tranquillo)\b/i,
    change: { rate: 0.85 },
  },
  {
    words: /\b(fast|quick|brisk|urgent|energetic|schnell|zügig|dringend|energisch|lebhaft|rapide|vite|urgent|veloce|rapido|urgente)\b/i,
    change: { rate: 1.15 },
  },
  {
    words: /\b(cheerful|happy|friendly|warm|excited|fröhlich|freundlich|heiter|begeistert|joyeux|gai|chaleureux|allegro|amichevole|gioioso)\b/i,
    change: { pitch: 1.12 },
  },
  { words: /\b(serious|formal|sober|ernst|sachlich|förmlich|seriös|sérieux|formel|serio|formale)\b/i, change: { pitch: 0.95 } },
  { words: /\b(quiet|soft|gentle|whisper\w*|leise|sanft|flüster\w*|doux|douce|bas|piano|sottovoce|sussurr\w*)\b/i, change: { volumeDb: -6 } },
  { words: /\b(loud|strong|forceful|laut|kräftig|fort|forte)\b/i, change: { volumeDb: 4 } },
];

/** The delivery a style prompt asks for. */
export function styleDelivery(style: string | null): Prosody {
  if (!style) return NEUTRAL_PROSODY;
  let delivery: Prosody = NEUTRAL_PROSODY;
  for (const cue of CUES) {
    if (!cue.words.test(style)) continue;
    delivery = {
      ...delivery,
      rate: delivery.rate * (cue.change.rate ?? 1),
      pitch: delivery.pitch * (cue.change.pitch ?? 1),
      volumeDb: delivery.volumeDb + (cue.change.volumeDb ?? 0),
    };
  }
  return delivery;
}

/** A text's own delivery (from markup) on top of the style's. */
export function combineDelivery(base: Prosody, own: Prosody | undefined): Prosody {
  if (!own) return base;
  return { rate: base.rate * own.rate, pitch: base.pitch * own.pitch, volumeDb: base.volumeDb + own.volumeDb, emphasis: own.emphasis ?? base.emphasis };
}
