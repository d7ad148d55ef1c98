/**
 * Vitest global setup: one real Temporal dev server for the whole test run (DESIGN §12), never a
 * mock. It is headless, keeps its state in memory and listens on a free port; tests reach it via
 * `inject("temporalAddress")`. The `temporal` CLI is found or installed under `.rewind/` first.
 *
 * Vitest calls a global setup once for the root config and once per project (vitest.config.ts
 * has two: files sharing a process, files on their own): they all share the one server, which
 * stops when the last of them tears down.
 */

import { appendFileSync } from "node:fs";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { findOrInstallTemporalCli, loadDevServerConfig, startDevServer, startOnFreePort } from "../../src/dev/index.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

interface SharedServer {
  started: ReturnType<typeof startServer>;
  users: number;
}

/** Kept on globalThis: Vitest may load this module anew for each project. */
const shared = globalThis as typeof globalThis & { rewindTestTemporal?: SharedServer };

async function startServer() {
  const log = (line: string): void => console.log(`[temporal] ${line}`);
  const cliPath = await findOrInstallTemporalCli({ stateDir: resolve(REPO_ROOT, ".rewind"), log });
  const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
  const server = await startOnFreePort(async (port) =>
    startDevServer({ cliPath, config, port, uiPort: false, dbFile: undefined, log }),
  );
  return { server, cliPath };
}

/**
 * With REWIND_TEST_CPU_LOG set (cpu-per-file.ts), the last line: Vitest's own process (collecting,
 * transforming, reporting) and what it reaped, the test workers and the dev server among them.
 */
function logMainProcessCpu(): void {
  const logFile = process.env["REWIND_TEST_CPU_LOG"];
  if (!logFile) return;
  const usage = process.resourceUsage();
  const own = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  appendFileSync(logFile, JSON.stringify({ file: "(vitest's own process)", wallS: 0, ownCpuS: own }) + "\n");
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const entry = (shared.rewindTestTemporal ??= { started: startServer(), users: 0 });
  entry.users += 1;
  const { server, cliPath } = await entry.started;
  project.provide("temporalAddress", server.address);
  project.provide("temporalNamespace", server.namespace);
  project.provide("temporalCliPath", cliPath);
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.rewindTestTemporal = undefined;
    await server.stop();
    logMainProcessCpu();
  };
}
