/**
 * Loads installed models in a process of its own and runs a little audio through each, so a
 * model that would end the process (a native assertion, a crash, sherpa-onnx's exit) ends
 * this one instead of the service. Prints `probing NAME` before and `ok NAME` after each, or
 * `failed NAME<tab>reason` when the model is refused with an error.
 * Usage: load-probe-child MODELS_DIR LANGUAGES NAME...
 */
import { startInstalledModels } from './installed-engines.js';

const RATE = 16000;

/** One second of a 300 Hz tone at a third of full scale, then half a second of silence. */
function probeAudio(rateHz: number): Int16Array {
  const pcm = new Int16Array(Math.round(1.5 * rateHz));
  for (let i = 0; i < rateHz; i++) pcm[i] = Math.round(10000 * Math.sin((2 * Math.PI * 300 * i) / rateHz));
  return pcm;
}

const [modelsDirArgument, languagesArgument, ...names] = process.argv.slice(2);
if (!modelsDirArgument || !languagesArgument) throw new Error('usage: load-probe-child MODELS_DIR LANGUAGES NAME...');
const modelsDir = modelsDirArgument;
const languages = languagesArgument.split(',');
for (const name of names) {
  process.stdout.write(`probing ${name}\n`);
  try {
    await probe(name);
  } catch (error) {
    // A refusal with a reason (not a crash): reported as it is, and the check stops here.
    process.stdout.write(`failed ${name}\t${(error instanceof Error ? error.message : String(error)).replaceAll('\n', ' ')}\n`);
    process.exit(1);
  }
  process.stdout.write(`ok ${name}\n`);
}

async function probe(name: string): Promise<void> {
  const engines = await startInstalledModels(modelsDir, languages, 1, { only: [name], probe: false });
  for (const engine of engines.recognisers) {
    const rateHz = engine.capabilities.sampleRatesHz[0]!;
    const stream = engine.open({ language: engine.capabilities.languages[0]!, vocabulary: [], sampleRateHz: rateHz }, new AbortController().signal);
    const reading = (async () => {
      for await (const event of stream) void event;
    })();
    stream.write(probeAudio(rateHz));
    stream.end();
    await reading;
  }
  if (engines.detectorFor) {
    const detector = engines.detectorFor(RATE);
    const audio = probeAudio(RATE);
    for (let at = 0; at + detector.frameSamples <= audio.length; at += detector.frameSamples) detector.isSpeech(audio.subarray(at, at + detector.frameSamples));
    detector.close();
  }
  if (engines.languageId)
    await engines.languageId.identify(
      Float32Array.from(probeAudio(RATE), (sample) => sample / 32768),
      new AbortController().signal,
    );
  await engines.close();
}
