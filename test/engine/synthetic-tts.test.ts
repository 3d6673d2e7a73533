import { SyntheticTtsEngine } from '../../engine/synthetic/synthetic-tts.js';
import { ttsConformance } from './tts-conformance.js';

ttsConformance('the synthetic sandbox engine', () => new SyntheticTtsEngine({ charactersPerSecond: 14, languages: ['de-CH', 'fr-CH'] }));
