/** Emscripten factories of packages that ship no type declarations. */
declare module '@echogarden/speex-resampler-wasm/simd' {
  const factory: () => Promise<unknown>;
  export default factory;
}
