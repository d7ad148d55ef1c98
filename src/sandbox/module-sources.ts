/**
 * Source text of the modules a script's isolate links: the script itself, `rewind:tools`
 * (generated from the pinned toolset), a private module that hands the runtime to
 * `rewind:tools`, and the entry module that loads them in an order that lets the one-shot
 * global vanish before any script code runs.
 */
import { listToolGroups, type PinnedToolset } from "../shared/index.ts";
import { INTERNAL_GLOBAL } from "./runtime-source.ts";

export const SCRIPT_SPECIFIER = "script.ts";
export const TOOLS_SPECIFIER = "rewind:tools";
export const INTERNAL_SPECIFIER = "rewind:internal";
export const ENTRY_SPECIFIER = "rewind:entry";

export const INTERNAL_MODULE_SOURCE = `const api = globalThis.${INTERNAL_GLOBAL};
delete globalThis.${INTERNAL_GLOBAL};
export default api;
`;

/** Loads `rewind:tools` before the script so its top level never sees the runtime's global. */
export const ENTRY_MODULE_SOURCE = `import api from "${INTERNAL_SPECIFIER}";
import "${TOOLS_SPECIFIER}";
import * as script from "${SCRIPT_SPECIFIER}";
api.attach(script);
`;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Group names become exported bindings, so registration only accepts identifiers. */
export function isExportableName(name: string): boolean {
  return IDENTIFIER.test(name) && !RESERVED_EXPORTS.has(name);
}

/** Names `rewind:tools` exports itself; a group may not shadow them. */
export const RESERVED_EXPORTS = new Set(["sleep", "waitForSignal", "webhook", "workflows", "ToolError", "default"]);

export function toolsModuleSource(toolset: PinnedToolset): string {
  const lines = [`import api from "${INTERNAL_SPECIFIER}";`];
  for (const { group, tools } of listToolGroups(toolset)) {
    if (!isExportableName(group)) throw new Error(`tool group "${group}" is not a valid export name`);
    lines.push(
      `export const ${group} = api.group(${JSON.stringify(group)}, ${JSON.stringify(tools.map((t) => t.name))});`,
    );
  }
  const workflowNames = Object.keys(toolset.workflows).sort();
  const entries = workflowNames.map((name) => `${JSON.stringify(name)}: api.workflow(${JSON.stringify(name)})`);
  lines.push(`export const workflows = Object.freeze({ ${entries.join(", ")} });`);
  lines.push(
    "export const sleep = api.sleep;",
    "export const waitForSignal = api.waitForSignal;",
    "export const webhook = api.webhook;",
    "export const ToolError = api.ToolError;",
  );
  if (toolset.http) lines.push("globalThis.fetch = api.fetch;");
  return lines.join("\n") + "\n";
}
