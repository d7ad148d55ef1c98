/**
 * Small statistics for the bench: medians and percentiles of samples, a least-squares slope, and
 * a clock that two processes on one machine read alike (for time from one process to another).
 */

export function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** The p-th percentile (0–100), interpolated between the nearest ranks. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = (p / 100) * (s.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = s[low] ?? Number.NaN;
  const highValue = s[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (rank - low);
}

export const median = (values: number[]): number => percentile(values, 50);
export const p95 = (values: number[]): number => percentile(values, 95);

export function mean(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Least-squares slope and intercept of y over x. */
export function linearFit(xs: number[], ys: number[]): { slope: number; intercept: number } {
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? my) - my);
    den += (x - mx) ** 2;
  });
  const slope = den === 0 ? Number.NaN : num / den;
  return { slope, intercept: my - slope * mx };
}

/** Milliseconds since the epoch with sub-millisecond precision; comparable across processes. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Milliseconds since `start` (a `performance.now()` reading). */
export function since(start: number): number {
  return performance.now() - start;
}

export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Formats a millisecond value for the table: 3 significant-ish digits. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  if (value >= 1) return `${value.toFixed(2)} ms`;
  return `${(value * 1000).toFixed(0)} µs`;
}
