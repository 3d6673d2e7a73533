import type { PronouncedSpan } from '../types.js';
import type { DeploymentLexicon } from './deployment-lexicon.js';
import type { RenderTrace } from './render-trace.js';

/**
 * The seam where Standard German becomes a Swiss German dialect before synthesis (spec 2.5).
 * Every `de-CH` passage passes through it; other languages keep their words.
 */
export interface DialectRenderer {
  /**
   * Writes out what the dialect says its own way (clock times) before the general
   * normalisation of numbers, dates and money runs.
   */
  prepare(text: string, dialect: string | null): string;
  /**
   * Rewrites the words of a `de-CH` text for a dialect; must keep marks' positions meaningful.
   * `trace` hears each step (for `sprachrohr dialect --explain`); without one nothing is recorded.
   */
  render(text: string, dialect: string | null, trace?: RenderTrace): string;
  /**
   * How a rendered text is pronounced in the dialect, span by span; `null` where the dialect
   * is read as written (Swiss Standard German).
   */
  pronounce(renderedText: string, dialect: string | null): PronouncedSpan[] | null;
  /**
   * The deployment's lexicon (`null`: none), consulted before the built-in data from the next
   * rendering on; a reload replaces it whole.
   */
  setLexicon(lexicon: DeploymentLexicon | null): void;
}
