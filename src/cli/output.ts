/**
 * How the client commands write: JSON for `--json` (stdout, nothing else), short human lines
 * otherwise, and type errors the way tsc shows them (position, code, source line, caret), so a
 * script's author reads them as they would read their editor's.
 */
import type { Diagnostic } from "../contract/index.ts";

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(text = ""): void {
  process.stdout.write(`${text}\n`);
}

/** One value on one line, cut at `max` characters. */
export function compact(value: unknown, max = 100): string {
  const text = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A value shown in full: on one line when short, indented JSON otherwise. */
export function full(value: unknown): string {
  const line = compact(value, Number.MAX_SAFE_INTEGER);
  return line.length <= 100 ? line : JSON.stringify(value, null, 2);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** A call's progress as `40/100 indexing…`: the count, the total when known, the server's message. */
export function progressText(progress: {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}): string {
  return `${progress.progress}${progress.total === undefined ? "" : `/${progress.total}`}${progress.message ? ` ${progress.message}` : ""}`;
}

/** Left-aligned columns for listings. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  "))
    .join("\n");
}

/**
 * Diagnostics as tsc prints them: `file:line:col - error TS2339: message`, then the source line
 * with a caret under the column. `file` names the user's file for diagnostics in the script;
 * diagnostics in the declarations are shown without source.
 */
export function formatDiagnostics(diagnostics: Diagnostic[], source: string, file: string): string {
  const lines = source.split(/\r?\n/);
  const blocks = diagnostics.map((d) => {
    const inScript = d.file === "script.ts";
    const code = d.code > 0 ? ` TS${d.code}` : "";
    const message = d.message.replace(/\n/g, "\n  ");
    const head = `${inScript ? file : d.file}:${d.line}:${d.column} - error${code}: ${message}`;
    const text = inScript ? lines[d.line - 1] : undefined;
    if (text === undefined) return head;
    const gutter = String(d.line);
    const pad = text.slice(0, Math.max(0, d.column - 1)).replace(/[^\t]/g, " ");
    return `${head}\n\n${gutter}  ${text}\n${" ".repeat(gutter.length)}  ${pad}^\n`;
  });
  const count = diagnostics.length === 1 ? "1 error" : `${diagnostics.length} errors`;
  return `${blocks.join("\n")}\nFound ${count} in ${file}.\n`;
}

export function isDiagnosticList(value: unknown): value is Diagnostic[] {
  return (
    Array.isArray(value) &&
    value.every(
      (d) =>
        typeof d === "object" &&
        d !== null &&
        typeof (d as Diagnostic).line === "number" &&
        typeof (d as Diagnostic).column === "number" &&
        typeof (d as Diagnostic).message === "string",
    )
  );
}
