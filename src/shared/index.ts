/**
 * Workflow-safe types, constants and pure functions every layer shares, the workflows included:
 * no Node built-ins, no imports but its own files (lint-enforced), so the workflow bundle may
 * import this index whole.
 */
export * from "./api-error-codes.ts";
export * from "./call-failures.ts";
export * from "./call-input.ts";
export * from "./canonical.ts";
export * from "./credentials.ts";
export * from "./durations.ts";
export * from "./event-data.ts";
export * from "./events.ts";
export * from "./fnv.ts";
export * from "./group-names.ts";
export * from "./host-call.ts";
export * from "./journal.ts";
export * from "./logger.ts";
export * from "./observed-shape.ts";
export * from "./observation-sinks.ts";
export * from "./own-keys.ts";
export * from "./revert-template.ts";
export * from "./rollback.ts";
export * from "./run-metrics.ts";
export * from "./run-summary.ts";
export * from "./run.ts";
export * from "./runtime-version.ts";
export * from "./step.ts";
export * from "./stored-script.ts";
export * from "./tool-call.ts";
export * from "./tool-error.ts";
export * from "./toolset-record.ts";
export * from "./toolset.ts";
export * from "./trace-context.ts";
