/**
 * The workflow bundle: its workflow modules are preloaded (shared by every execution in the
 * worker's V8 context), and a cached bundle is reused only while nothing it was built from changed.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  VERSIONED_WORKFLOWS_PATH,
  WORKFLOWS_PATH,
  WORKFLOW_INTERCEPTOR_MODULES,
  loadWorkflowBundle,
} from "../../src/worker/workflow-bundle.ts";

let cacheDir: string;

beforeAll(async () => {
  cacheDir = await mkdtemp(path.join(tmpdir(), "rewind-bundle-"));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

/** The module ids the bundle's `preloadModules` requires, in order. */
function preloaded(code: string): string[] {
  const body = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? "";
  return [...body.matchAll(/__webpack_require__\([^)]*"([^"]+)"\)/g)].map((m) => m[1] ?? "");
}

const moduleId = (file: string) => `./${path.relative(path.resolve(WORKFLOWS_PATH, "../../.."), file)}`;

describe("workflow bundle", () => {
  it("preloads the workflows and the interceptor, for either entry", async () => {
    const plain = await loadWorkflowBundle(cacheDir);
    expect(preloaded(plain.code)).toEqual([WORKFLOWS_PATH, ...WORKFLOW_INTERCEPTOR_MODULES].map(moduleId));
    const versioned = await loadWorkflowBundle(cacheDir, { versioned: true });
    expect(preloaded(versioned.code)).toEqual(
      [VERSIONED_WORKFLOWS_PATH, ...WORKFLOW_INTERCEPTOR_MODULES].map(moduleId),
    );
  }, 120_000);

  it("reads a bundle built before from the cache, one file per entry", async () => {
    const first = await loadWorkflowBundle(cacheDir);
    const again = await loadWorkflowBundle(cacheDir);
    expect(again.code).toBe(first.code);
    const files = (await readdir(cacheDir)).filter((name) => name.endsWith(".js"));
    expect(files).toHaveLength(2);
    expect(files.filter((name) => name.startsWith("workflows-versioned-"))).toHaveLength(1);
  }, 120_000);
});
