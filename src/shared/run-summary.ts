/**
 * What the Temporal UI shows of a run from its start: a one-line static summary (toolset, end
 * user, the first line of the script's leading comment), static details and a memo. Shared by the
 * API, which starts runs, and the run workflow, which starts child runs, so both read alike.
 */
import type { RunInput, RunMemo } from "./run.ts";

/** Temporal keeps summaries short (the server refuses large ones); a UI row shows far less. */
const MAX_SUMMARY = 160;
const MAX_DESCRIPTION = 100;

export interface RunStartDescription {
  staticSummary: string;
  staticDetails: string;
  memo: RunMemo;
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * The first line of the script's leading comment: the first comment before any statement other
 * than imports (`// Files a ticket per failing check` or a `/** … *\/` block), trimmed. Undefined
 * when the script starts with code.
 *
 * @example
 * scriptDescription('import { t } from "rewind:tools";\n// Triage new tickets\nexport default …') // "Triage new tickets"
 */
export function scriptDescription(script: string): string | undefined {
  let rest = script;
  for (;;) {
    rest = rest.replace(/^\s+/, "");
    const importLine = /^import\s[^;\n]*(?:;|\n)/.exec(rest);
    if (!importLine) break;
    rest = rest.slice(importLine[0].length);
  }
  let lines: string[] = [];
  if (rest.startsWith("//")) {
    for (const line of rest.split("\n")) {
      if (!line.trimStart().startsWith("//")) break;
      lines.push(line.trimStart().replace(/^\/+/, ""));
    }
  } else if (rest.startsWith("/*")) {
    const end = rest.indexOf("*/");
    lines = rest
      .slice(2, end < 0 ? undefined : end)
      .split("\n")
      .map((l) => l.replace(/^\s*\*+/, ""));
  }
  const first = lines.map((l) => l.trim()).find((l) => l.length > 0);
  return first ? clip(first, MAX_DESCRIPTION) : undefined;
}

/** The short form of a toolset id in a summary line: `ts_` and its first 12 hex digits. */
const shortToolset = (id: string): string => (id.length > 15 ? `${id.slice(0, 15)}…` : id);

/** Summary, details and memo of a run about to start. */
export function describeRunStart(
  run: Pick<RunInput, "toolsetId" | "endUser" | "script" | "scriptHash" | "parentRunId" | "fork">,
): RunStartDescription {
  const description = scriptDescription(run.script);
  const summary = [
    `toolset ${shortToolset(run.toolsetId)}`,
    ...(run.endUser ? [`end user ${run.endUser}`] : []),
    ...(description ? [description] : []),
  ];
  const details = [
    `**Rewind run**`,
    `toolset: ${run.toolsetId}`,
    ...(run.endUser ? [`end user: ${run.endUser}`] : []),
    ...(description ? [`script: ${description}`] : []),
    `script sha256: ${run.scriptHash}`,
    ...(run.parentRunId ? [`started by run ${run.parentRunId}`] : []),
    ...(run.fork ? [`fork of run ${run.fork.parentRunId}`] : []),
    "What it is doing or waiting for: Current Details.",
  ];
  return {
    staticSummary: clip(summary.join(" · "), MAX_SUMMARY),
    staticDetails: details.join("\n"),
    memo: { toolset: run.toolsetId, ...(run.endUser ? { endUser: run.endUser } : {}) },
  };
}
