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
    // What the built-in data makes of the text, with the lexicon's word where its entry was.
    const instead = (region: string, german: string, word: string) => plain.render(text, region).replace(plain.render(german, region), word);
    expect(own.render(text, 'zurich')).toBe(instead('zurich', 'nicht', 'nöööd'));
    expect(own.render(text, 'zurich')).toContain(' nöööd ');
    expect(own.render(text, 'bern')).toBe(instead('bern', 'Kundendienst', 'Chundeservice'));
    expect(own.render(text, 'bern')).toContain('Chundeservice');
    expect(own.render('Wir haben heute geschlossen.', 'basel')).toBe('Mir händ hüt zue.');
    // Case-insensitive whole words: a longer word is not the entry.
    expect(own.render('STADTWERKE und Stadtwerkes', 'zurich')).toBe('Stadtwärch und Stadtwerkes');
  });

  it('leaves the passes around a match their word: articles, the genitive, the perfect', () => {
    const own = rendererWith();
    const plain = new SwissGermanRenderer();
    // The same as the built-in data renders the sentence, the lexicon's words where its entries were.
    const like = (text: string, ...words: Array<[string, string]>) =>
      words.reduce((out, [german, word]) => out.replace(plain.render(german, 'zurich'), word), plain.render(text, 'zurich'));
    expect(own.render('Die Stadtwerke sind offen.', 'zurich')).toBe(like('Die Stadtwerke sind offen.', ['Stadtwerke', 'Stadtwärch']));
    expect(own.render('Die Stadtwerke sind offen.', 'zurich')).toMatch(/^D Stadtwärch /);
    const genitive = 'Der Kundendienst der Stadtwerke antwortet.';
    expect(own.render(genitive, 'zurich')).toBe(like(genitive, ['Stadtwerke', 'Stadtwärch']));
    expect(own.render(genitive, 'zurich')).toMatch(/ vo de Stadtwärch /);
    const perfect = 'Die Störung war in Dübendorf.';
    expect(own.render(perfect, 'zurich')).toBe(like(perfect, ['Dübendorf', 'Dübendorf']));
    expect(own.render(perfect, 'zurich')).toMatch(/ in Dübendorf gsi\.$/);
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
    expect(lines.find((line) => line.startsWith('  Guten Tag → Grüezi: '))).toMatch(/: phrase "guten tag" \(standard: .+\)$/);
    expect(lines.find((line) => line.startsWith('  drücken Sie → drücked Si: formal verb with Sie /'))).toMatch(/\(zurich: /);
    expect(lines.find((line) => line.startsWith('  Die → D:') || line.startsWith('  die → d:'))).toMatch(/^ {2}die → d: pattern \//);
    expect(lines.find((line) => line.startsWith('  Eins → Eis:'))).toMatch(/number word "eins" \(standard: /);
    expect(lines.find((line) => line.startsWith('  Der → De: '))).toMatch(/: word "der" → "de" \(standard: .+\)$/);
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
