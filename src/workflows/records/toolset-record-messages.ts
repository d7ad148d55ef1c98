/**
 * What clients may send to a toolset record (toolset-record.ts): runs signal the result shapes
 * they observe, the API queries them. Its own file so senders import the definitions, not the
 * workflow.
 */
import { defineQuery, defineSignal } from "@temporalio/workflow";
import type { ObservedResults } from "../../shared/index.ts";

export const observeResultsSignal =
  defineSignal<[{ tool: string; shape: Record<string, unknown>; count: number }]>("observeResults");
export const getObservedQuery = defineQuery<ObservedResults>("getObserved");
