/**
 * The shape of credentials a harness writes: per MCP server of the toolset, headers to inject
 * into its connection. One schema for every place that accepts them (toolset, end user, run,
 * registration), so they are validated alike.
 */
import { z } from "zod";

export const credentialsBody = z.strictObject({
  mcpServers: z.record(
    z.string().min(1).max(64),
    z.strictObject({
      headers: z.record(
        z
          .string()
          .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "header names must be tokens")
          .max(200),
        z
          .string()
          .max(8192)
          .regex(/^[^\r\n\0]*$/, "header values may not hold CR, LF or NUL"),
      ),
    }),
  ),
});

export type CredentialsBody = z.infer<typeof credentialsBody>;
