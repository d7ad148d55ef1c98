/**
 * A tool a server lists but the toolset leaves out because a schema of its can't be used. Said
 * in the registration response, never pinned: the toolset id stays the digest of what is
 * pinned. Its own module so the API's response schemas need nothing of the pinning code.
 */

export const OMIT_REASONS = [
  "notASchema",
  "unsupportedDialect",
  "unresolvableRef",
  "invalidSchema",
  "unsupportedPattern",
] as const;
export type OmitReason = (typeof OMIT_REASONS)[number];

export interface OmittedTool {
  /** The MCP server's group name. */
  server: string;
  tool: string;
  /** The schema at fault. */
  schema: "inputSchema" | "outputSchema";
  reason: OmitReason;
  message: string;
}
