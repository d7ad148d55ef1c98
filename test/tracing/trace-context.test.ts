import { describe, expect, it } from "vitest";
import { callSpanId, formatTraceparent, parseTraceparent } from "../../src/shared/trace-context.ts";

/** FNV-1a 64 written the obvious way, with BigInt: what the limb arithmetic must equal. */
function referenceFnv64(text: string): string {
  const mask = (1n << 64n) - 1n;
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) hash = ((hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & mask;
  return (hash === 0n ? 1n : hash).toString(16).padStart(16, "0");
}

describe("call span ids", () => {
  it("are FNV-1a 64 of the trace, root span and seq", () => {
    for (let seq = 1; seq <= 2_000; seq++) {
      const trace = {
        traceId: `${seq.toString(16).padStart(8, "0")}${"ab".repeat(12)}`,
        rootSpanId: `é€${seq * 7919}`,
      };
      expect(callSpanId(trace, seq)).toBe(referenceFnv64(`${trace.traceId}/${trace.rootSpanId}/call/${seq}`));
    }
  });

  it("make a traceparent that parses back", () => {
    const trace = { traceId: "0af7651916cd43dd8448eb211c80319c", rootSpanId: "b7ad6b7169203331" };
    const spanId = callSpanId(trace, 3);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(parseTraceparent(formatTraceparent(trace.traceId, spanId))).toEqual({ traceId: trace.traceId, spanId });
  });
});
