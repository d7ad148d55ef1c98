/**
 * The logger of Rewind's own processes: one line per event on stderr, `level message k=v…`,
 * filtered by REWIND_LOG_LEVEL. Plain text because a person reads it first.
 */
import type { Logger } from "../shared/index.ts";

const ORDER = { debug: 0, info: 1, warn: 2, error: 3 } as const;
type Level = keyof typeof ORDER;

/** JSON of a field, where an Error (which JSON writes as `{}`) is its name and message, and its cause's. */
function json(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, item: unknown) =>
    item instanceof Error
      ? `${item.name}: ${item.message}${item.cause instanceof Error ? ` (cause: ${item.cause.name}: ${item.cause.message})` : ""}`
      : item,
  );
}

function render(fields: Record<string, unknown> | undefined): string {
  if (!fields) return "";
  return Object.entries(fields)
    .map(([key, value]) => ` ${key}=${typeof value === "string" && !/\s/.test(value) ? value : json(value)}`)
    .join("");
}

export function createConsoleLogger(minimum: Level, component: string): Logger {
  const at = (level: Level) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < ORDER[minimum]) return;
    process.stderr.write(`${new Date().toISOString()} ${level.padEnd(5)} [${component}] ${message}${render(fields)}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
