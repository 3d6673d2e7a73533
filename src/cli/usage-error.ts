/** A mistake in how a command was called; the CLI prints it with a pointer to `--help`. */
export class UsageError extends Error {
  override name = 'UsageError';
}
