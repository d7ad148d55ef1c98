/**
 * Builds the workflow bundle once per content and caches it under the state dir, so starting a
 * worker (the embedded stack, each test file, a restarted worker) does not pay webpack's few
 * seconds every time. The cache key covers every file the bundle can include from src/, this
 * file and the SDK version, so an edit always rebuilds.
 *
 * The workflow modules are preloaded: evaluated once in the worker's reusable V8 context and
 * shared by every workflow it runs (the SDK freezes what they export), instead of evaluated
 * again for each new run. That halves the CPU of creating a run's workflow (the bench's
 * `--profile`, start scenario). It holds because no workflow module keeps state at module scope:
 * only constants, proxies that find the running workflow when called, and state each run makes
 * for itself (see src/workflows/index.ts).
 *
 * The loaded code starts by setting how many stack frames errors keep in the workflows' V8
 * context (`stackFrames`, `Config.workflowStackFrames`). Temporal's SDK takes a stack, and maps it
 * through the bundle's source map, for every promise a workflow creates, so that its stack-trace
 * query can say where a workflow waits; with no frames to take that is nearly free. It goes in
 * front of the bundle's first line, so the source map still points every later line right.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode } from "@temporalio/worker";
import { DEFAULT_WORKFLOW_STACK_FRAMES } from "../config.ts";

const SRC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const WORKFLOWS_PATH = path.join(SRC_DIR, "workflows", "index.ts");
/** The entry for workers of a Worker Deployment version (record workflows auto-upgrade). */
export const VERSIONED_WORKFLOWS_PATH = path.join(SRC_DIR, "workflows", "versioned.ts");
/** Bundled with either entry: reports each run's start, end and parkings to the worker's metrics (a sink). */
export const WORKFLOW_INTERCEPTOR_MODULES = [path.join(SRC_DIR, "workflows", "run-metrics-interceptor.ts")];

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const full = path.join(dir, e.name);
      return e.isDirectory() ? filesUnder(full) : Promise.resolve(e.name.endsWith(".ts") ? [full] : []);
    }),
  );
  return nested.flat().sort();
}

async function contentKey(): Promise<string> {
  const hash = createHash("sha256");
  const sdk = JSON.parse(
    await readFile(path.join(SRC_DIR, "..", "node_modules", "@temporalio", "workflow", "package.json"), "utf8"),
  ) as { version: string };
  // This file too: the options it bundles with change what a bundle holds.
  hash.update(sdk.version).update(await readFile(fileURLToPath(import.meta.url)));
  for (const dir of ["workflows", "shared"]) {
    for (const file of await filesUnder(path.join(SRC_DIR, dir))) {
      hash.update(file).update(await readFile(file));
    }
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * Returns the bundle's code, from the cache when the sources have not changed, with its stack
 * frames set (`stackFrames`, default `DEFAULT_WORKFLOW_STACK_FRAMES`).
 */
export async function loadWorkflowBundle(
  cacheDir: string,
  options: { versioned?: boolean; stackFrames?: number } = {},
): Promise<{ code: string }> {
  const code = await bundleCode(cacheDir, options.versioned ?? false);
  return { code: withStackFrames(code, options.stackFrames ?? DEFAULT_WORKFLOW_STACK_FRAMES) };
}

/** `code` that first sets `Error.stackTraceLimit` in the context it runs in, on its first line. */
export function withStackFrames(code: string, frames: number): string {
  if (!Number.isInteger(frames) || frames < 0)
    throw new RangeError(`stack frames must be a whole number, got ${frames}`);
  return `Error.stackTraceLimit = ${frames}; ${code}`;
}

async function bundleCode(cacheDir: string, versioned: boolean): Promise<string> {
  const entry = versioned ? VERSIONED_WORKFLOWS_PATH : WORKFLOWS_PATH;
  const file = path.join(cacheDir, `workflows-${versioned ? "versioned-" : ""}${await contentKey()}.js`);
  try {
    return await readFile(file, "utf8");
  } catch {
    const { code } = await bundleWorkflowCode({
      workflowsPath: entry,
      workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
      preloadModules: [entry, ...WORKFLOW_INTERCEPTOR_MODULES],
      logger: quietLogger,
    });
    await mkdir(cacheDir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, code);
    await rename(temp, file);
    return code;
  }
}

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
