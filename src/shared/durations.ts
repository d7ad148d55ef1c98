/**
 * Parses the durations scripts and policies write ("2s", "10 days", 1500). Shared because the
 * sandbox validates them when a script calls `sleep`, and the workflow turns them into timers.
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1_000,
  sec: 1_000,
  secs: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i;

/** The longest duration accepted anywhere: ten years, far beyond any sane sleep. */
export const MAX_DURATION_MS = 10 * 365 * 86_400_000;

/**
 * Returns milliseconds, or a sentence saying why the value is not a duration.
 * A bare number (or numeric string) is milliseconds.
 */
export function parseDuration(value: unknown): { ms: number } | { error: string } {
  let ms: number;
  if (typeof value === "number") {
    ms = value;
  } else if (typeof value === "string") {
    const match = DURATION_PATTERN.exec(value);
    const unit = match?.[2]?.toLowerCase() ?? "ms";
    const factor = UNIT_MS[unit];
    if (!match || factor === undefined) {
      return { error: `"${value}" is not a duration (use milliseconds or e.g. "2s", "5 minutes", "10 days")` };
    }
    ms = Number(match[1]) * factor;
  } else {
    return { error: `a duration must be a number of milliseconds or a string like "2s", got ${typeof value}` };
  }
  if (!Number.isFinite(ms) || ms < 0)
    return { error: `duration must be a finite, non-negative number of milliseconds` };
  if (ms > MAX_DURATION_MS) return { error: `duration exceeds the maximum of 10 years` };
  return { ms: Math.round(ms) };
}
