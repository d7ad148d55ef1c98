/**
 * Toolsets: registering one (listing its servers' tools, pinning, policies) and its
 * content-addressed id.
 */
export { RegistrationError } from "./registration-error.ts";
export { createToolsetRegistry, type ResolvedToolset, type ToolsetRegistry } from "./toolset-registry.ts";
export {
  renderDeclarations,
  searchTools,
  unknownToolNames,
  type DeclarationsRequest,
  type FoundTool,
} from "./toolset-views.ts";
