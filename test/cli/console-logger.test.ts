/**
 * The processes' log line: an Error in a field is written as its name and message (JSON alone
 * writes `{}`), nested or not, with its cause; other values as JSON, plain words as they are.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createConsoleLogger } from "../../src/cli/console-logger.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

function linesOf(log: (logger: ReturnType<typeof createConsoleLogger>) => void): string[] {
  const written: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  log(createConsoleLogger("info", "test"));
  return written;
}

describe("the console logger", () => {
  it("writes an Error field as its name and message, with its cause, not {}", () => {
    const failure = new TypeError("the script failed", { cause: new RangeError("too deep") });
    const [line] = linesOf((logger) =>
      logger.warn("run failed", { error: failure, nested: { error: new Error("x") } }),
    );
    expect(line).toMatch(
      / warn {2}\[test\] run failed error="TypeError: the script failed \(cause: RangeError: too deep\)"/,
    );
    expect(line).toContain('nested={"error":"Error: x"}');
    expect(line).not.toContain("{}");
  });

  it("keeps plain words bare, other values as JSON, and drops what is under its level", () => {
    const lines = linesOf((logger) => {
      logger.info("started", { taskQueue: "rewind", count: 3, tags: ["a b"] });
      logger.debug("hidden");
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ info {2}\[test\] started taskQueue=rewind count=3 tags=\["a b"\]\n$/);
  });
});
