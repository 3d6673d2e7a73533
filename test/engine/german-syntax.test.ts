import { describe, expect, it } from 'vitest';
import { GERMAN_SYNTAX, rewriteGermanSyntax } from '../../engine/dialect/german-syntax.js';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';

describe('German-side syntax rewrites', () => {
  it('keep a source note on every row of their data file', () => {
    for (const row of GERMAN_SYNTAX.preterite) {
      expect(row, row[0]).toHaveLength(4);
      expect(['sein', 'haben']).toContain(row[1]);
      expect(row[3].length, row[0]).toBeGreaterThan(3);
    }
    for (const pattern of GERMAN_SYNTAX.patterns) expect(pattern.source.length).toBeGreaterThan(10);
    expect(GERMAN_SYNTAX.auxiliaries.sein).toHaveLength(6);
    expect(GERMAN_SYNTAX.auxiliaries.haben).toHaveLength(6);
  });

  const cases: Array<[string, string, string]> = [
    ['preterite of sein → perfect, participle at the clause end', 'Die Eingabe war nicht korrekt.', 'Die Eingabe ist nicht korrekt gewesen.'],
    ['first person from "ich"', 'Ich war gestern in Bern.', 'Ich bin gestern in Bern gewesen.'],
    ['plural from the ending', 'Sie hatten einen Termin.', 'Sie haben einen Termin gehabt.'],
    ['second person singular', 'Du warst nicht da.', 'Du bist nicht da gewesen.'],
    ['question word order', 'Hatten Sie einen Termin?', 'Haben Sie einen Termin gehabt?'],
    ['passive: wurde + participle → ist … worden', 'Ihr Passwort wurde zurückgesetzt.', 'Ihr Passwort ist zurückgesetzt worden.'],
    ['passive with an inseparable prefix', 'Die Störung wurde behoben.', 'Die Störung ist behoben worden.'],
    ['wurde + adjective → geworden', 'Es wurde kalt.', 'Es ist kalt geworden.'],
    ['verbs of motion take sein', 'Der Techniker kam um zehn.', 'Der Techniker ist um zehn gekommen.'],
    ['a separable particle joins the participle', 'Der Strom fiel gestern aus.', 'Der Strom ist gestern ausgefallen.'],
    ['modal: participle before the infinitive', 'Wir konnten Ihre Zahlung nicht zuordnen.', 'Wir haben Ihre Zahlung nicht gekonnt zuordnen.'],
    ['verb-final clause after a comma', 'Wir wissen, dass es gut war.', 'Wir wissen, dass es gut gewesen ist.'],
    ['verb-final modal clause', 'Es tut uns leid, dass wir nicht kommen konnten.', 'Es tut uns leid, dass wir nicht haben gekonnt kommen.'],
    ['pluperfect keeps only the auxiliary', 'Ihre Zahlung war eingegangen.', 'Ihre Zahlung ist eingegangen.'],
    ['each coordinated clause on its own', 'Die Störung war bekannt und wurde behoben.', 'Die Störung ist bekannt gewesen und ist behoben worden.'],
    ['a conjunction without a preterite after it stays inside the clause', 'Ich war in Bern und Basel.', 'Ich bin in Bern und Basel gewesen.'],
    ['genitive des → vom', 'Die Nummer des Vertrags steht oben.', 'Die Nummer vom Vertrag steht oben.'],
    ['feminine genitive der → von der', 'Die Nummer der Rechnung steht oben.', 'Die Nummer von der Rechnung steht oben.'],
    ['plural genitive der before a noun in -en → von den', 'Ein Viertel der Gemeinden ist da.', 'Ein Viertel von den Gemeinden ist da.'],
    ['dative der after a preposition stays', 'Sie steht auf der Rechnung.', 'Sie steht auf der Rechnung.'],
    ['relative pronoun → wo', 'Das Formular, das Sie ausgefüllt haben, ist da.', 'Das Formular, wo Sie ausgefüllt haben, ist da.'],
    [
      'relative pronoun after the verb → wo',
      'Wir haben die Rechnung erhalten, die Sie geschickt haben.',
      'Wir haben die Rechnung erhalten, wo Sie geschickt haben.',
    ],
    ['an article after a comma stays', 'Bitte warten Sie, die Leitung ist besetzt.', 'Bitte warten Sie, die Leitung ist besetzt.'],
    ['a demonstrative after an interjection stays', 'Danke, das ist nett.', 'Danke, das ist nett.'],
    ['zu + infinitive → z', 'Wir versuchen, Sie zu erreichen.', 'Wir versuchen, Sie z erreichen.'],
    [
      'zu inside a separable verb, and um … zu → für … z',
      'Um zum Menü zurückzukehren, drücken Sie die Eins.',
      'Für zum Menü zurück z kehren, drücken Sie die Eins.',
    ],
    ['zu before an adjective and its noun stays', 'Produkte zu günstigen Preisen.', 'Produkte zu günstigen Preisen.'],
    ['a capitalised preterite-looking word inside a clause is a noun', 'Der Stand ist gut.', 'Der Stand ist gut.'],
    ['present tense is left alone', 'Wir sind von 8 bis 17 Uhr erreichbar.', 'Wir sind von 8 bis 17 Uhr erreichbar.'],
    ['a weak preterite by its ending: haben + ge- + stem + -t', 'Er spielte gestern Fussball.', 'Er hat gestern Fussball gespielt.'],
    ['a weak preterite with a separable particle', 'SVP und CVP lehnten die Pläne ab.', 'SVP und CVP haben die Pläne abgelehnt.'],
    [
      'a weak preterite of a t-stem, and no ge- after an inseparable prefix',
      'Sie arbeiteten und versuchten es.',
      'Sie haben gearbeitet und haben es versucht.',
    ],
    ['a weak verb of motion takes sein', 'Er reiste nach Bern.', 'Er ist nach Bern gereist.'],
    [
      'second person -st → -sch with du',
      'Du denkst nie nach, wenn du etwas machst. Machst du es?',
      'Du denksch nie nach, wenn du etwas machsch. Machsch du es?',
    ],
    ['a separable particle written with a weak verb goes before ge-', 'Als er aufwachte, ging er.', 'Als er ist aufgewacht, ist er gegangen.'],
    ['der between two nouns is a genitive', 'Taiwan ist Teil der Volksrepublik.', 'Taiwan ist Teil von der Volksrepublik.'],
    ['des with an adjective before its noun', 'Aus Sicht des Schweizer Bevölkerungsschutzes.', 'Aus Sicht vom Schweizer Bevölkerungsschutz.'],
    ['a strong preterite from the table', 'Sie nahm den Zug.', 'Sie hat den Zug genommen.'],
    ['a present tense in -ten stays', 'Sie arbeiten viel.', 'Sie arbeiten viel.'],
    ['an adjective in -te after an article is no preterite (and loses its -e)', 'Der nächste Termin ist frei.', 'Der nächst Termin ist frei.'],
    ['an adjective in -e takes -i after ein-words', 'Eine grosse Stadt hat viele alte Häuser.', 'Eine grossi Stadt hat viele alti Häuser.'],
    ['Sankt is no preterite', 'Sankt Gallen ist schön.', 'Sankt Gallen ist schön.'],
    ['a plural that is its own participle stays after a present auxiliary', 'Das Spiel ist verloren.', 'Das Spiel ist verloren.'],
    ['the same participle after haben', 'Sie haben das Spiel verloren.', 'Sie haben das Spiel verloren.'],
    ['the same word without an auxiliary is the preterite', 'Wir verloren das Spiel.', 'Wir haben das Spiel verloren.'],
    ['a preterite two words after aber', 'Es hat geregnet aber die Strassen waren trocken.', 'Es hat geregnet aber die Strassen sind trocken gewesen.'],
    ['weak preterites after their subject and after und', 'Er lachte nie und zeigte auf sie.', 'Er hat nie gelacht und hat auf sie gezeigt.'],
    ['deuten … hin is a present tense', 'Die Zahlen deuten darauf hin.', 'Die Zahlen deuten darauf hin.'],
    ['verb-final passive after a comma', 'Er ging, während das Haus durchsucht wurde.', 'Er ist gegangen, während das Haus durchsucht worden ist.'],
    [
      'a weak preterite last in a clause that starts with its conjunction',
      'Dass sie nicht lachten, lag am Wetter.',
      'Dass sie nicht haben gelacht, ist am Wetter gelegen.',
    ],
    ['der between a noun and an abbreviation is a genitive', 'Laut Berichten der UNO hungern viele.', 'Laut Berichten von der UNO hungern viele.'],
    [
      'no genitive after aufgrund, infolge',
      'Er fehlte aufgrund der Krankheit, infolge des Unfalls.',
      'Er hat aufgrund von der Krankheit gefehlt, infolge vom Unfall.',
    ],
    ['more strong preterites: schied … aus, erschrak', 'Der Verein schied aus. Er erschrak.', 'Der Verein ist ausgeschieden. Er ist erschrocken.'],
    ['a noun at the start of a sentence is no preterite', 'Rang drei erreichte der Läufer.', 'Rang drei hat der Läufer erreicht.'],
    ['a verb of saying after a comma before its subject', 'Es sei gut, betonte Meier.', 'Es sei gut, hat Meier betont.'],
    ['antworten has no particle an-', '« Danke! » antwortete Anna.', '« Danke! » hat die Anna geantwortet.'],
    ['hinzu joins the participle', 'Das reicht, fügte sie hinzu.', 'Das reicht, hat sie hinzugefügt.'],
    ['a weak preterite last in a relative clause', 'Er sah eine Rakete, die explodierte.', 'Er hat eine Rakete gesehen, wo explodiert ist.'],
    [
      'a weak preterite in second place before its subject with an article',
      'Am Montag lehnte der Rat den Antrag ab.',
      'Am Montag hat der Rat den Antrag abgelehnt.',
    ],
    ['an adjective in -te after an article stays', 'Er sah die erhöhte Lage.', 'Er hat die erhöhte Lage gesehen.'],
    ['an adjective after den before a masculine noun takes no ending', 'Er will den alten Hund behalten.', 'Er will den alt Hund behalten.'],
    ['a dative plural keeps its ending', 'Er gab den kleinen Kindern Brot.', 'Er hat den kleinen Kindern Brot gegeben.'],
    ['a first name alone takes the article too', 'Peter kommt. Dann lacht Anna.', 'Der Peter kommt. Dann lacht die Anna.'],
    ['trotz, wegen, während take the dative', 'Trotz eines Fehlers blieb er wegen des Regens.', 'Trotz einem Fehler ist er wegen dem Regen geblieben.'],
    ['zu sein and zu tun are infinitives too', 'Es gab viel zu tun, es schien zu sein.', 'Es hat viel z tun gegeben, es hat z sein geschienen.'],
    ['a verb-final pluperfect keeps only the auxiliary', 'Er lachte, weil sie angekommen war.', 'Er hat gelacht, weil sie angekommen ist.'],
  ];
  for (const [what, german, rewritten] of cases) it(what, () => expect(rewriteGermanSyntax(german)).toBe(rewritten));

  it('feed the region lexicons: the rewritten sentence comes out in dialect', () => {
    const renderer = new SwissGermanRenderer();
    expect(renderer.render('Die Eingabe war nicht korrekt.', 'zurich')).toBe('D Iigab isch nöd korrekt gsi.');
    expect(renderer.render('Die Eingabe war nicht korrekt.', 'bern')).toBe('D Iigab isch nid korrekt gsi.');
    expect(renderer.render('Es tut uns leid, dass wir nicht kommen konnten.', 'zurich')).toBe('Es tuet eus leid, dass mir nöd händ chöne cho.');
    expect(renderer.render('Der Strom fiel gestern aus.', 'zurich')).toBe('De Strom isch geschter usgfalle.');
    expect(renderer.render('Das Formular, das Sie ausgefüllt haben, ist angekommen.', 'zurich')).toBe('S Formular, wo Si usgfüllt händ, isch aacho.');
    // Swiss Standard German keeps the German grammar.
    expect(renderer.render('Die Eingabe war nicht korrekt.', 'hochdeutsch')).toBe('Die Eingabe war nicht korrekt.');
  });
});
