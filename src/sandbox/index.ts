/** The sandbox's public surface: one step of a script, with warm sessions and limits. */
export { createSandbox, type Sandbox, type SandboxOptions } from "./sandbox.ts";
export { MachineBusyError, type WallBackstop } from "./script-session.ts";
export { isExportableName, RESERVED_EXPORTS } from "./module-sources.ts";
export type { SchemaValidator } from "./call-gate.ts";
