/**
 * Every workflow the Rewind worker registers (the worker's `workflowsPath` points here).
 *
 * The worker preloads this module and everything it imports once, and every workflow execution
 * on that worker shares them (src/worker/workflow-bundle.ts). So module scope holds constants and
 * proxies only (`proxyActivities`, `proxySinks`, definitions of signals, queries and updates):
 * whatever belongs to a run is made by the run, or kept on `globalThis`, which the SDK keeps
 * apart for each execution.
 */
export * from "./run/run-script.ts";
export * from "./records/toolset-record.ts";
export * from "./records/namespace-settings.ts";
export * from "./delivery/deliver-event.ts";
export * from "./records/stored-script-record.ts";
export * from "./records/toolset-credentials.ts";
