/**
 * The body of `POST /v1/toolsets`, as zod schemas: the API validates with them and the OpenAPI
 * document is generated from them. Shapes only; what needs the servers or the base toolset
 * (tool names, schemas, policies' targets) is checked while pinning.
 */
import { z } from "zod";
import { credentialsBody } from "./credentials-body.ts";
import { groupNameProblem } from "../shared/index.ts";
import { TOOLSET_ID_PATTERN } from "./ids.ts";

/** A group's name, refused with the rule it breaks (see shared/group-names.ts). */
const groupName = z.string().superRefine((name, ctx) => {
  const problem = groupNameProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const toolName = z.string().min(1).max(128);
const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);
const duration = z.union([z.number().int().positive(), z.string().min(1).max(40)]);

/** How a rollback undoes a completed call of the tool; registration checks the template against the toolset. */
export const revertPolicySchema = z
  .strictObject({
    tool: z.string().min(3).max(200).describe("The tool that undoes the call, `group.tool`, of the same toolset"),
    args: z
      .unknown()
      .describe(
        "The revert's arguments: JSON where a string that is exactly `{{args.path}}` or `{{result.path}}` takes that value of the original call (dot-separated keys or indices); everything else is literal",
      ),
  })
  .describe('How POST /v1/runs/{id}/rollback (or `onFailure: "rollback"`) undoes a completed call of this tool');

export const toolPolicySchema = z.strictObject({
  onInterruption: z.enum(["retry", "at_most_once"]).optional(),
  onUnknown: z
    .enum(["fail", "park"])
    .optional()
    .describe(
      "An at_most_once call whose outcome is unknown: `fail` (ToolError(outcomeUnknown), the default) or `park` until the harness resolves, retries or fails it",
    ),
  approval: z.boolean().optional(),
  timeout: duration.optional(),
  heartbeatTimeout: duration.optional(),
  concurrency: z.number().int().min(1).max(16).optional(),
  revert: revertPolicySchema.optional(),
});

export const hostToolSchema = z.strictObject({
  description: z.string().max(10_000).optional(),
  inputSchema: jsonSchema,
  outputSchema: jsonSchema.optional(),
});

/** Which of a server's tools to pin: only those named, or all but those named. */
export const toolSelectionSchema = z.union([
  z.strictObject({
    include: z.array(toolName).min(1).max(1000).describe("Pin only these tools; each must be listed by the server"),
  }),
  z.strictObject({
    exclude: z
      .array(toolName)
      .max(1000)
      .describe("Pin every tool but these; names the server does not list are ignored"),
  }),
]);

export const registerToolsetBody = z.strictObject({
  base: z.string().regex(TOOLSET_ID_PATTERN, "base must be a toolset id (ts_ followed by 64 hex digits)").optional(),
  mcpServers: z
    .record(
      groupName,
      z.strictObject({
        url: z.url({ protocol: /^https?$/, error: "url must be an http or https URL" }),
        tools: toolSelectionSchema.optional(),
      }),
    )
    .optional(),
  hostTools: z
    .record(
      groupName,
      z.strictObject({
        taskQueue: z.string().min(1).max(200),
        tools: z.record(toolName, hostToolSchema),
      }),
    )
    .optional(),
  http: z
    .strictObject({
      allowedHosts: z.array(z.string().min(1).max(253)).max(100),
    })
    .optional(),
  workflows: z.record(groupName, z.string().min(1).max(200)).optional(),
  policies: z.record(z.string().min(3).max(200), toolPolicySchema).optional(),
  scriptApproval: z
    .literal("required")
    .optional()
    .describe("Every run of this toolset waits, before its first step, for the harness to approve its script"),
  /** Used to list the servers' tools, then kept as the toolset's credentials; never part of the document. */
  credentials: credentialsBody.optional(),
});

export type RegisterToolsetBody = z.infer<typeof registerToolsetBody>;
export type ToolPolicyInput = z.infer<typeof toolPolicySchema>;
export type ToolSelection = z.infer<typeof toolSelectionSchema>;
