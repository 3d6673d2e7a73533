/** A worker thread that owns one Vosk model and its recognisers (see `../stt/worker-host.ts`). */
import { serveDecoders } from '../stt/worker-host.js';
import type { VoskModelLayout } from './vosk-model.js';
import { loadVoskNative, VoskModel, VoskUtterance } from './vosk-native.js';

/** What each worker loads. */
export interface VoskWorkerSettings {
  readonly layout: VoskModelLayout;
  /** `libvosk.so` to load instead of the `vosk` package's. */
  readonly libraryPath: string | null;
}

serveDecoders<VoskWorkerSettings>(({ layout, libraryPath }) => {
  loadVoskNative(libraryPath ?? undefined);
  const model = new VoskModel(layout.folder);
  return () => new VoskUtterance(model, layout.sampleRateHz, layout.dynamicGraph);
});
