/**
 * A registered toolset, kept in Temporal (the only stateful dependency) as a workflow that
 * stays open: its start input is the pinned document, read back from the first history event
 * without a worker. It also gathers the result shapes runs observe for tools without an output
 * schema, and continues as new (carrying them) when Temporal suggests.
 */
import { condition, continueAsNew, setHandler, workflowInfo } from "@temporalio/workflow";

import { mergeShapes } from "../../shared/index.ts";
import type { ObservedResults, ToolsetRecordInput } from "../../shared/index.ts";
import { getObservedQuery, observeResultsSignal } from "./toolset-record-messages.ts";

export async function toolsetRecord(input: ToolsetRecordInput): Promise<void> {
  const observed: ObservedResults = { ...input.observed };
  setHandler(getObservedQuery, () => observed);
  setHandler(observeResultsSignal, ({ tool, shape, count }) => {
    const seen = observed[tool];
    observed[tool] = seen
      ? // Records widen: the record's state only, no command depends on it (see ShapeOptions).
        {
          schema: mergeShapes(seen.schema as Record<string, unknown>, shape, { records: true }),
          count: seen.count + count,
        }
      : { schema: shape, count };
  });
  // Open for good (a closed workflow would be deleted after the namespace's retention period).
  await condition(() => workflowInfo().continueAsNewSuggested);
  await continueAsNew<typeof toolsetRecord>({ ...input, observed });
}
