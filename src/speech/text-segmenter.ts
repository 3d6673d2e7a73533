/**
 * Cuts text that arrives piece by piece (a language model's output) into segments to
 * synthesise: whole sentences as soon as they are complete, the rest when flushed. A piece that
 * is a whole `<speak>` document is a segment of its own, at once.
 */

/** A sentence ends with one of these, closing quotes or brackets, then white space. */
const SENTENCE_END = /[.!?…;:]["'»«”’)\]]*\s+|\n+/g;
/** Text without a sentence end is cut at a space once it grows this long. */
const LONGEST_SEGMENT = 400;

/** Turns appended text into speakable segments. */
export class TextSegmenter {
  private pending = '';

  /** Characters waiting for the end of their sentence. */
  get pendingCharacters(): number {
    return this.pending.length;
  }

  /** Adds text; returns the segments it completed, in order. */
  append(text: string): string[] {
    if (text.trimStart().startsWith('<speak')) {
      // Markup is spoken as it comes: what was waiting goes first, then the document.
      return [...this.flush(), text.trim()];
    }
    this.pending += text;
    const segments: string[] = [];
    let cut = 0;
    for (const match of this.pending.matchAll(SENTENCE_END)) cut = match.index + match[0].length;
    if (cut > 0) {
      segments.push(
        ...this.pending
          .slice(0, cut)
          .split(/(?<=[.!?…;:]["'»«”’)\]]*)\s+|\n+/)
          .map((part) => part.trim())
          .filter(Boolean),
      );
      this.pending = this.pending.slice(cut);
    }
    while (this.pending.length > LONGEST_SEGMENT) {
      const space = this.pending.lastIndexOf(' ', LONGEST_SEGMENT);
      const at = space > 0 ? space : LONGEST_SEGMENT;
      segments.push(this.pending.slice(0, at).trim());
      this.pending = this.pending.slice(at);
    }
    return segments.filter(Boolean);
  }

  /** Everything waiting, as one segment (none when only white space waits). */
  flush(): string[] {
    const rest = this.pending.trim();
    this.pending = '';
    return rest === '' ? [] : [rest];
  }
}
