/** Every workflow the Rewind worker registers (the worker's `workflowsPath` points here). */
export * from "./run/run-script.ts";
export * from "./records/toolset-record.ts";
export * from "./records/namespace-settings.ts";
export * from "./delivery/deliver-event.ts";
export * from "./records/stored-script-record.ts";
export * from "./records/toolset-credentials.ts";
