/**
 * The renderer with a deployment lexicon: its words and phrases win over the built-in data, per
 * region; the passes around them still see a word there (articles, the genitive, the perfect);
 * its pronunciations win in the pronunciation pass, names keep their spelling and are
 * pronounced in hochdeutsch too; the trace names the source of each word and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { explainRendering, RenderSteps } from '../../engine/dialect/render-trace.js';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { checkLexicon } from '../../src/speech/lexicon-loader.js';

const LEXICON = checkLexicon(
  'lexicon.yaml',
  `entries:
  - german: Stadtwerke
    dialect: Stadtwärch
    pronunciation: { ipa: "ˈʃtatʋærx" }
  - german: Dübendorf
    pronunciation: { ipa: "ˈdyːbəndɔrf" }
  - german: Kundendienst
    regions: { bern: Chundeservice }
  - german: nicht
    regions: { zurich: nöööd }
  - german: Wir haben heute geschlossen
    dialect: Mir händ hüt zue
`,
);

function rendererWith(lexicon = LEXICON): SwissGermanRenderer {
  const renderer = new SwissGermanRenderer();
  renderer.setLexicon(lexicon);
  return renderer;
}

describe('rendering with a deployment lexicon', () => {
  it('wins over the built-in data, with forms per region', () => {
    const plain = new SwissGermanRenderer();
    const own = rendererWith();
    const text = 'Der Kundendienst ist nicht erreichbar.';
    expect(plain.render(text, 'zurich')).toBe('De Chundedienscht isch nöd erreichbar.');
    expect(own.render(text, 'zurich')).toBe('De Chundedienscht isch nöööd erreichbar.');
    expect(own.render(text, 'bern')).toBe('Dr Chundeservice isch nid erreichbar.');
    expect(own.render('Wir haben heute geschlossen.', 'basel')).toBe('Mir händ hüt zue.');
    // Case-insensitive whole words: a longer word is not the entry.
    expect(own.render('STADTWERKE und Stadtwerkes', 'zurich')).toBe('Stadtwärch und Stadtwerkes');
  });

  it('leaves the passes around a match their word: articles, the genitive, the perfect', () => {
    const own = rendererWith();
    expect(own.render('Die Stadtwerke sind offen.', 'zurich')).toBe('D Stadtwärch sind offe.');
    expect(own.render('Der Kundendienst der Stadtwerke antwortet.', 'zurich')).toMatch(/^De Chundedienscht vo de Stadtwärch /);
    expect(own.render('Die Störung war in Dübendorf.', 'zurich')).toBe('D Störig isch in Dübendorf gsi.');
  });

  it('keeps names as written and pronounces them as the lexicon says, also in hochdeutsch', () => {
    const own = rendererWith();
    const rendered = own.render('Die Stadtwerke Dübendorf', 'zurich');
    expect(rendered).toBe('D Stadtwärch Dübendorf');
    const spans = own.pronounce(rendered, 'zurich')!;
    expect(spans.find((span) => span.text === 'Dübendorf')?.ipa).toBe('ˈdyːbəndɔrf');
    // The article leans on the lexicon's word, which keeps its pronunciation.
    expect(spans.find((span) => span.text === 'D Stadtwärch')?.ipa).toBe('ˈdʃtatʋærx');
    expect(new SwissGermanRenderer().pronounce('Dübendorf', 'zurich')![0]!.ipa).not.toBe('ˈdyːbəndɔrf');
    // Hochdeutsch keeps the words and is read as written, but for the names.
    expect(own.render('Die Stadtwerke Dübendorf', 'hochdeutsch')).toBe('Die Stadtwerke Dübendorf');
    expect(own.pronounce('Die Stadtwerke Dübendorf.', 'hochdeutsch')).toEqual([
      { text: 'Die Stadtwerke ', ipa: null },
      { text: 'Dübendorf', ipa: 'ˈdyːbəndɔrf' },
      { text: '.', ipa: null },
    ]);
    expect(own.pronounce('Die Stadtwerke.', 'hochdeutsch')).toBeNull();
  });

  it('is replaced whole, and removed', () => {
    const renderer = rendererWith();
    renderer.setLexicon(checkLexicon('other.yaml', 'entries:\n  - german: Stadtwerke\n    dialect: Wärch\n'));
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Wärch');
    // The name is no longer the lexicon's: the built-in data renders it.
    expect(renderer.render('Dübendorf', 'zurich')).toBe(new SwissGermanRenderer().render('Dübendorf', 'zurich'));
    renderer.setLexicon(null);
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Stadtwerke');
  });

  it('keeps words with thorn (its placeholders are written with it) as they are', () => {
    expect(rendererWith().render('Þór und Stadtwerke', 'zurich')).toBe('Þór und Stadtwärch');
  });
});

describe('the rendering trace', () => {
  it('names the source of each word and changes nothing', () => {
    const renderer = rendererWith();
    const text = 'Guten Tag, drücken Sie die Eins. Der Kundendienst der Stadtwerke war nicht erreichbar.';
    const steps = new RenderSteps();
    const traced = renderer.render(text, 'zurich', steps);
    expect(traced).toBe(renderer.render(text, 'zurich'));
    const lines = explainRendering(steps.steps, 'zurich');
    expect(lines).toContain('  Stadtwerke → Stadtwärch: deployment lexicon, said /ˈʃtatʋærx/, entry at lexicon.yaml:2:5');
    expect(lines).toContain('  nicht → nöööd: deployment lexicon, entry at lexicon.yaml:9:5');
    expect(lines).toContain('  Guten Tag → Grüezi: phrase "guten tag" (standard: greeting)');
    expect(lines.find((line) => line.startsWith('  drücken Sie → drücked Si: formal verb with Sie /'))).toMatch(/\(zurich: /);
    expect(lines.find((line) => line.startsWith('  Die → D:') || line.startsWith('  die → d:'))).toMatch(/^ {2}die → d: pattern \//);
    expect(lines.find((line) => line.startsWith('  Eins → Eis:'))).toMatch(/number word "eins" \(standard: /);
    expect(lines).toContain('  Der → De: word "der" → "de" (standard: article)');
    expect(lines.find((line) => line.includes('ist nicht erreichbar gewesen'))).toMatch(/German-side syntax rewrite/);
    expect(lines.find((line) => line.startsWith('  Kundendienst → Chundedienscht:'))).toMatch(/^ {2}Kundendienst → Chundedienscht: (word|spelling rule)/);
  });

  it('names the spelling rules a word went through, and a word nothing changes', () => {
    const steps = new RenderSteps();
    new SwissGermanRenderer().render('Anmeldungen und Konto', 'zurich', steps);
    const lines = explainRendering(steps.steps, 'zurich');
    expect(lines.find((line) => line.startsWith('  Anmeldungen → Anmeldige:'))).toMatch(/spelling rules? \/.*\/ → ".*" \(standard: /);
    expect(lines.find((line) => line.startsWith('  Konto → Konto:'))).toMatch(/kept|word/);
  });
});
