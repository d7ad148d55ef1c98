/**
 * The answer of `GET /v1/toolsets/{id}/tools?query=…`: the tools that best match a few words,
 * best first, each as the line the compact prompt shows for it. Its own module so the SDK's
 * client and the API share the shape without touching the other response schemas.
 */
import { z } from "zod";

export const toolSearchView = z.object({
  tools: z
    .array(
      z.object({
        name: z.string().describe("Qualified name, `group.tool`, as `?tools=` of the declarations takes it"),
        line: z.string().describe("The tool's line of the compact prompt rendering"),
        score: z.number().describe("BM25 relevance; higher is better, comparable only within one answer"),
      }),
    )
    .describe("Best first; only tools sharing a word with the query"),
});

export type ToolSearchBody = z.infer<typeof toolSearchView>;
