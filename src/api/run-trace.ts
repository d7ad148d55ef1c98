/**
 * A new run's trace: fresh random ids, continuing the caller's trace when the request that
 * started the run carried a W3C `traceparent` (so a harness's own trace leads into the run).
 */
import { randomBytes } from "node:crypto";
import { parseTraceparent, type RunTrace } from "../shared/index.ts";

export function newRunTrace(traceparent: string | undefined): RunTrace {
  const caller = parseTraceparent(traceparent);
  const rootSpanId = randomBytes(8).toString("hex");
  return caller
    ? { traceId: caller.traceId, rootSpanId, parentSpanId: caller.spanId }
    : { traceId: randomBytes(16).toString("hex"), rootSpanId };
}
