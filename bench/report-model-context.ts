/**
 * The model-context scenario's part of the report: per task, the tokens a model reads doing it
 * with classic MCP tool calling and through Rewind's front door, and the median saving.
 */
import type { ModelContextResult } from "./scenarios/model-context.ts";

export function renderModelContext(
  result: ModelContextResult,
  table: (headers: string[], rows: string[][]) => string,
): string {
  const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
  const count = (value: number) => value.toLocaleString("en-US");
  return [
    `\n### Model context: tokens a model reads per task (o200k_base), ${count(result.tools)} tools\n`,
    `Fixed context (the tools' definitions, read every turn): classic ${count(result.fixedContext.classic)} tokens ` +
      `(${count(result.fixedContext.classicReferenceOnly)} with the reference servers' tools only), Rewind ${count(result.fixedContext.rewind)}.\n`,
    table(
      [
        "task",
        "tool calls",
        "classic: turns / tokens read",
        "Rewind: turns / tokens read",
        "saved",
        "classic, reference servers only",
        "saved against it",
      ],
      result.tasks.map((row) => [
        row.task,
        String(row.calls),
        `${row.classicTurns} / ${count(row.classicTokens)}`,
        `${row.rewindTurns} / ${count(row.rewindTokens)}`,
        pct(row.saved),
        count(row.classicReferenceOnlyTokens),
        pct(row.savedReferenceOnly),
      ]),
    ),
    `\nMedian saving: ${pct(result.medianSaved)} against the whole toolset's definitions, ` +
      `${pct(result.medianSavedReferenceOnly)} against the reference servers' alone.`,
  ].join("\n");
}
