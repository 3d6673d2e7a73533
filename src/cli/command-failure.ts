/** A command that ran as asked but failed; the CLI prints the message and exits with 1. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}
