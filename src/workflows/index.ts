/** Every workflow the Rewind worker registers (the worker's `workflowsPath` points here). */
export * from "./run-script.ts";
export * from "./toolset-record.ts";
export * from "./namespace-settings.ts";
export * from "./deliver-event.ts";
export * from "./workflow-script-record.ts";
export * from "./toolset-credentials.ts";
