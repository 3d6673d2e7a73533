/** Reading single settings from the environment, with the error that names the variable. */

/** A configuration problem, naming the variable at fault. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** The environment variables configuration is read from. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A text setting, or the fallback when unset or empty. */
export function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

/**
 * A whole-number setting within bounds, or the fallback when unset.
 * @throws ConfigError naming the variable when it is not a number in range
 */
export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/**
 * A decimal setting within bounds (`0.5`, `2`), or the fallback when unset.
 * @throws ConfigError naming the variable when it is not a decimal number in range
 */
export function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigError(name, `must be a decimal number such as 0.5, got ${JSON.stringify(raw)}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}
