/**
 * The logging interface the rest of the code depends on. The embedded stack writes JSON lines
 * to stderr; tests pass a silent or capturing logger. Shared so that any layer can accept one.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
