import { FORMATS } from '../catalog/formats.js';
import { planSynthesis } from './synthesis-request.js';
import { synthesizeBatch, type SynthesisEngines } from './synthesis-service.js';

/**
 * Runs one short synthesis per output format through the whole batch path (normaliser,
 * engine, resampler, encoder) so the first requests do not pay for compiling it (what that
 * costs: docs/performance.md, "Measurements behind the code's choices").
 */
export async function warmSynthesis(engines: SynthesisEngines): Promise<void> {
  for (const format of FORMATS) {
    const plan = planSynthesis({ text: 'Grüezi, am 1.2. um 10:30 Uhr: CHF 12.50.', format: format.id }, false);
    await synthesizeBatch(engines, plan, new AbortController().signal);
  }
}
