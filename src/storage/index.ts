/**
 * Where registered toolsets and stored scripts are kept: Temporal record workflows, read back from
 * their first history event (record-store.ts), behind one store per kind.
 */
export {
  STORED_SCRIPT_ID_PATTERN,
  createStoredScriptStore,
  storedScriptId,
  type StoredScriptStore,
} from "./stored-script-store.ts";
export { createTemporalToolsetStore, type ToolsetStore } from "./toolset-store.ts";
export { toolsetId, canonicalJson } from "./toolset-id.ts";
export { InFlight } from "./in-flight.ts";
