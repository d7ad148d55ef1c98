/**
 * Patching discipline: workflow code names every patch through PATCHES (one place, each with
 * the change it guards), every named patch is in use, and no id is used twice. The replay
 * corpus is what proves old histories still replay; this keeps the patches themselves honest.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PATCHES } from "../../src/workflows/run/patches.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

const WORKFLOWS = path.join(REPO_ROOT, "src", "workflows");

/** Every workflow file but patches.ts itself, by its path under src/workflows/ (sub-folders included). */
async function workflowSources(): Promise<{ file: string; text: string }[]> {
  const entries = await readdir(WORKFLOWS, { recursive: true });
  const files = entries.filter((f) => f.endsWith(".ts") && f !== path.join("run", "patches.ts"));
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(path.join(WORKFLOWS, file), "utf8") })));
}

describe("patches", () => {
  it("are only ever named through PATCHES, each in use, each id once", async () => {
    const sources = await workflowSources();
    for (const { file, text } of sources) {
      // The announcement asks for each of them by value, in declaration order.
      if (file === path.join("run", "run-patches.ts")) continue;
      for (const call of text.matchAll(/\b(?:patched|isPatched|deprecatePatch)\(([^)]*)\)/g)) {
        expect(call[1], `${file}: ${call[0]}`).toMatch(/^PATCHES\.\w+$/);
      }
    }
    const all = sources.map((s) => s.text).join("\n");
    for (const name of Object.keys(PATCHES)) expect(all, `PATCHES.${name} is not used`).toContain(`PATCHES.${name}`);
    const ids = Object.values(PATCHES);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
