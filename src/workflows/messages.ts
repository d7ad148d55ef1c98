/**
 * What code outside the workflows may send to them: the run's and the record workflows' signals,
 * queries and updates, and the types they carry. The API, the activities and the event delivery
 * import this file, never a workflow: index.ts is the worker's bundle entry, where every exported
 * function becomes a workflow type. The definitions import only @temporalio/workflow's define*
 * and shared types, so a client loads no workflow code.
 */
export * from "./run/messages.ts";
export * from "./records/toolset-record-messages.ts";
export * from "./records/namespace-settings-messages.ts";
export * from "./records/toolset-credentials-messages.ts";
