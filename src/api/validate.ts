/**
 * Request validation with zod: one schema per body or query, parsed once at the route's edge.
 * A mismatch is a 400 that lists every problem with its path, so a client fixes them in one go.
 */
import type { z } from "zod";
import { HttpError } from "./http-error.ts";

export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: "body" | "query" | "path",
): z.infer<S> {
  if (where === "body" && value === undefined) {
    throw new HttpError(400, "badRequest", "expected a JSON body (Content-Type: application/json)");
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap(problemsOf);
  const summary = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
  throw new HttpError(400, "badRequest", `invalid request ${where}: ${summary}`, { problems });
}

/**
 * One issue as the problems a caller reads: a record key's issue ("Invalid key in record") is
 * the key's own issues, at the key's path, so the caller reads the rule the key broke.
 */
function problemsOf(issue: z.core.$ZodIssue): { path: string; message: string }[] {
  if (issue.code === "invalid_key" && issue.issues.length > 0)
    return issue.issues.flatMap((inner) => problemsOf({ ...inner, path: [...issue.path, ...inner.path] }));
  return [{ path: issue.path.join(".") || "(root)", message: issue.message }];
}
