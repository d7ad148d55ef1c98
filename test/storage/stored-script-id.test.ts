/**
 * A stored script's content address: the fields added after the first stored scripts (description,
 * declared input type) count only when present, so a script stored before keeps its id.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { storedScriptId } from "../../src/storage/index.ts";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("storedScriptId", () => {
  it("is the digest of name, script hash and toolset when nothing else is given", () => {
    const first = `wf_${sha('{"name":"scan","scriptHash":"abc","toolsetId":"ts_1"}')}`;
    expect(storedScriptId("scan", "abc", "ts_1")).toBe(first);
    expect(storedScriptId("scan", "abc", "ts_1", { description: undefined, inputType: undefined })).toBe(first);
  });

  it("covers a description and an input type when present", () => {
    const plain = storedScriptId("scan", "abc", "ts_1");
    const typed = storedScriptId("scan", "abc", "ts_1", { inputType: "{ repo: string; }" });
    const described = storedScriptId("scan", "abc", "ts_1", { description: "Scans" });
    expect(new Set([plain, typed, described]).size).toBe(3);
    expect(described).toBe(`wf_${sha('{"description":"Scans","name":"scan","scriptHash":"abc","toolsetId":"ts_1"}')}`);
    expect(typed).toBe(
      `wf_${sha('{"inputType":"{ repo: string; }","name":"scan","scriptHash":"abc","toolsetId":"ts_1"}')}`,
    );
  });
});
