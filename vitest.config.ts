/**
 * Test runner settings. Every test worker is a forked Node process started with
 * `--no-node-snapshot`, which isolated-vm requires on Node 20+; one shared Temporal dev server is
 * started by the global setup. Timeouts are generous because tests drive real servers.
 */

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/temporal-global-setup.ts"],
    pool: "forks",
    // Vitest 4 passes top-level `execArgv` to each worker process (poolOptions is gone).
    execArgv: ["--no-node-snapshot"],
    // The machines this runs on have two cores, and each worker talks to the same server.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
