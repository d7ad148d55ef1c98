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
  const problems = result.error.issues.map((issue) => ({
    path: issue.path.join(".") || "(root)",
    message: issue.message,
  }));
  const summary = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
  throw new HttpError(400, "badRequest", `invalid request ${where}: ${summary}`, { problems });
}
