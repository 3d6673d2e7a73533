/**
 * The seam where Standard German becomes a Swiss German dialect before synthesis (spec 2.5).
 * Every `de-CH` passage passes through it; other languages keep their words.
 */
export interface DialectRenderer {
  /** Rewrites the words of a `de-CH` text for a dialect; must keep marks' positions meaningful. */
  render(text: string, dialect: string | null): string;
}

/**
 * Swiss Standard German for every `de-CH` dialect: Swiss spelling (ß → ss), words unchanged.
 * The dialect renderer proper replaces it region by region.
 */
export class SwissStandardRenderer implements DialectRenderer {
  render(text: string): string {
    return text.replace(/ß/g, 'ss').replace(/ẞ/g, 'SS');
  }
}
