/** A worker thread that owns pocketsphinx decoders (see `../stt/worker-host.ts`). */
import { serveDecoders, type NativeUtteranceDecoder } from '../stt/worker-host.js';
import { loadPocketsphinxNative, PocketsphinxDecoder, type DecoderArguments } from './pocketsphinx-native.js';
import { vocabularyGrammar } from './vocabulary-grammar.js';

/** A decoder that turns a vocabulary into a JSGF grammar of the phrases it can pronounce. */
function decoderWith(args: DecoderArguments): NativeUtteranceDecoder {
  const decoder = new PocketsphinxDecoder(args);
  return {
    useVocabulary: (phrases) => decoder.useGrammar(phrases.length > 0 ? vocabularyGrammar(phrases, (word) => decoder.knows(word)).grammar : null),
    start: () => decoder.start(),
    process: (pcm) => decoder.process(pcm),
    partial: () => decoder.partial(),
    finish: () => decoder.finish(),
    free: () => decoder.free(),
  };
}

serveDecoders<DecoderArguments>((args) => {
  loadPocketsphinxNative();
  return () => decoderWith(args);
});
