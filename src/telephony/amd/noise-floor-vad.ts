/**
 * Voice activity from frame energy against the line's noise floor. The floor is the quietest
 * frame of the last second (minimum statistics): speech has gaps between syllables, so the
 * minimum over a second is the line's noise, whatever its level, and it follows a change of
 * line within a second. A frame is voiced when it is a margin above that floor and above an
 * absolute minimum (digital silence has no floor to be above). The floor has a ceiling: a callee
 * who speaks from the very first frame would otherwise set it at the level of their own voice,
 * and a line whose noise reaches the ceiling's margin is louder than any real line.
 */

/** How voice is told from the line's noise. */
export interface NoiseFloorVadOptions {
  /** How far above the noise floor a frame must be to count as voice (default 12 dB). */
  readonly marginDb?: number;
  /** The quietest voice, whatever the floor (default −50 dBFS RMS). */
  readonly minVoiceDbfs?: number;
  /** The loudest floor believed (default −35 dBFS RMS): louder "noise" is someone speaking. */
  readonly maxFloorDbfs?: number;
}

/** Frames in a block of the floor's window: the window is {@link BLOCKS} blocks, 1 s of 20 ms frames. */
const BLOCK_FRAMES = 10;
const BLOCKS = 5;
/** Mean square of a full-scale level: a level in dBFS RMS is 10·log10(energy / FULL_SCALE). */
const FULL_SCALE = 32768 * 32768;

/** Mean square of a level in dBFS RMS. */
export function energyOfDbfs(dbfs: number): number {
  return FULL_SCALE * 10 ** (dbfs / 10);
}

/** Tells voiced frames from the line's noise, one stream's frames in order. */
export class NoiseFloorVad {
  private readonly margin: number;
  private readonly minVoice: number;
  private readonly maxFloor: number;
  /** Minimum energy of each finished block of the window (a ring); Infinity before it has one. */
  private readonly blockMinima = new Float64Array(BLOCKS).fill(Infinity);
  private block = 0;
  private blockFrames = 0;
  private currentMinimum = Infinity;

  constructor(options: NoiseFloorVadOptions = {}) {
    this.margin = 10 ** ((options.marginDb ?? 12) / 10);
    this.minVoice = energyOfDbfs(options.minVoiceDbfs ?? -50);
    this.maxFloor = energyOfDbfs(options.maxFloorDbfs ?? -35);
  }

  /** The noise floor now, as a mean square. */
  get floor(): number {
    let floor = Math.min(this.maxFloor, this.currentMinimum);
    for (let i = 0; i < BLOCKS; i++) floor = Math.min(floor, this.blockMinima[i]!);
    return floor;
  }

  /** Takes the next frame's energy (mean square); true when it is voiced. */
  isVoiced(energy: number): boolean {
    this.currentMinimum = Math.min(this.currentMinimum, energy);
    if (++this.blockFrames === BLOCK_FRAMES) {
      this.blockMinima[this.block] = this.currentMinimum;
      this.block = (this.block + 1) % BLOCKS;
      this.blockFrames = 0;
      this.currentMinimum = Infinity;
    }
    return energy >= this.minVoice && energy > this.floor * this.margin;
  }
}
