/** The package ships no types: its default export is the Emscripten module factory. */
declare module '@echogarden/fvad-wasm' {
  const createModule: () => Promise<unknown>;
  export default createModule;
}
