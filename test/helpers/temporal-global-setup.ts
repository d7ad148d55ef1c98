/**
 * Vitest global setup: one real Temporal dev server for the whole test run (DESIGN §12), never a
 * mock. It is headless, keeps its state in memory and listens on a free port; tests reach it via
 * `inject("temporalAddress")`. The `temporal` CLI is found or installed under `.rewind/` first.
 */

import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { findOrInstallTemporalCli, loadDevServerConfig, startDevServer, startOnFreePort } from "../../src/dev/index.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => console.log(`[temporal] ${line}`);
  const cliPath = await findOrInstallTemporalCli({ stateDir: resolve(REPO_ROOT, ".rewind"), log });
  const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
  const server = await startOnFreePort(async (port) =>
    startDevServer({ cliPath, config, port, uiPort: false, dbFile: undefined, log }),
  );
  project.provide("temporalAddress", server.address);
  project.provide("temporalNamespace", server.namespace);
  project.provide("temporalCliPath", cliPath);
  return async () => server.stop();
}
