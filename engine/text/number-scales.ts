/** A whole number below 10¹² split into its billions, millions, thousands and the rest (each 0–999). */
export function numberScales(n: number): { billions: number; millions: number; thousands: number; rest: number } {
  return { billions: Math.floor(n / 1e9), millions: Math.floor((n % 1e9) / 1e6), thousands: Math.floor((n % 1e6) / 1000), rest: n % 1000 };
}
