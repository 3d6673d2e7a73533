/** Emscripten factories of packages that ship no type declarations. */
declare module '@echogarden/speex-resampler-wasm/simd' {
  const factory: () => Promise<unknown>;
  export default factory;
}
declare module '@echogarden/espeak-ng-emscripten' {
  const factory: () => Promise<unknown>;
  export default factory;
}
