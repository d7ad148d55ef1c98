/**
 * The call gate refuses, before a call is journaled, a tool the pinned toolset does not have:
 * `unknownTool`, which a script only meets when it reaches past the declarations it was given.
 */
import { describe, expect, it } from "vitest";
import { createCallGate } from "../../src/sandbox/call-gate.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

describe("call gate", () => {
  const gate = createCallGate(EMPTY_TOOLSET, validateAgainstSchema);

  it("refuses fetch when the toolset does not enable http, with unknownTool", () => {
    expect(gate("http.fetch", { url: "https://example.com" }, 32)).toEqual({
      refused: { code: "unknownTool", message: "this toolset does not enable http" },
    });
  });

  it("refuses a workflow or built-in the toolset does not have, with unknownTool", () => {
    expect(gate("rewind.workflows.start", { workflow: "missing" }, 24)).toMatchObject({
      refused: { code: "unknownTool" },
    });
    expect(gate("rewind.nothing", {}, 2)).toMatchObject({ refused: { code: "unknownTool" } });
  });

  it("refuses arguments that do not fit a built-in with invalidArguments", () => {
    expect(gate("rewind.sleep", { duration: "whenever" }, 24)).toMatchObject({
      refused: { code: "invalidArguments" },
    });
  });
});
