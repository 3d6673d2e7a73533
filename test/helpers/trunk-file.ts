/**
 * The text of a trunk file (`trunks.yaml`) for the trunk tests: each trunk's fields as written
 * in the file, in order, so that a test states only what it is about.
 */

/** A trunk's fields: scalars as they stand in YAML (strings are written as they are, not quoted). */
export type TrunkFields = Readonly<Record<string, string | number | boolean>>;

/** `trunks:` with one list entry for each trunk given. */
export function trunkFile(...trunks: readonly TrunkFields[]): string {
  const lines = ['trunks:'];
  for (const trunk of trunks) {
    Object.entries(trunk).forEach(([field, value], index) => lines.push(`${index === 0 ? '  - ' : '    '}${field}: ${String(value)}`));
  }
  return lines.join('\n');
}
