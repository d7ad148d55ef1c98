/**
 * Test runner settings. Every test worker is a forked Node process started with
 * `--no-node-snapshot`, which isolated-vm requires on Node 20+; one shared Temporal dev server is
 * started by the global setup. Timeouts are generous because tests drive real servers.
 *
 * Most files share their worker process with the files before them (`isolate: false`): each file
 * would otherwise load the Temporal SDK, TypeScript and the rest again, and that loading was a
 * third of the suite's CPU (measured on ten stack-starting files: 90 CPU-s isolated, 62 shared;
 * the whole suite 1,133 s against 748 s). A file in the shared project must therefore leave no
 * process-wide state behind (environment variables, globals, listeners) and cannot count on
 * being the first in its process; the few that must be, are listed in OWN_PROCESS.
 *
 * The suite starts a few hundred Node processes (test workers, stacks, CLIs), each compiling the
 * same dependencies: Node's compile cache (in .rewind/, kept between runs) saves each one that
 * work, some 5% of the CPU of a test file that starts a stack (measured: 38 s against 40 s).
 */

import path from "node:path";
import { defineConfig } from "vitest/config";

process.env["NODE_COMPILE_CACHE"] ??= path.resolve(import.meta.dirname, ".rewind", "node-compile-cache");

/**
 * Files that need a Node process of their own: the Temporal SDK's runtime (and its logger) is
 * installed once per process, and these install theirs before any stack does.
 */
const OWN_PROCESS = ["test/credentials/canary.test.ts"];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        // test/cluster/ runs against a self-hosted cluster: `npm run test:cluster` (vitest.cluster.config.ts).
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...OWN_PROCESS, "test/cluster/**"],
          isolate: false,
        },
      },
      { extends: true, test: { name: "own-process", include: OWN_PROCESS, isolate: true } },
    ],
    globalSetup: ["test/helpers/temporal-global-setup.ts"],
    // REWIND_TEST_CPU_LOG=<file> logs each file's CPU (test/helpers/cpu-report.ts sums it up).
    setupFiles: ["test/helpers/cpu-per-file.ts"],
    pool: "forks",
    // Vitest 4 passes top-level `execArgv` to each worker process (poolOptions is gone).
    execArgv: ["--no-node-snapshot"],
    // Four test workers on two cores: a file spends about half its time waiting (on timers,
    // servers, outages it stages), so two workers left a core idle much of the time. Measured
    // with REWIND_TEST_CPU_LOG on the whole suite: 650 CPU-s either way; 663 s of wall time with
    // two workers, 413 s with four.
    maxWorkers: 4,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // An error thrown where no test awaits it still fails the run; one thrown by a Temporal client
    // retrying a call on a connection already closed says so, and how to avoid it.
    onUnhandledError(error) {
      if (/Channel has been shut down/.test(error.message))
        error.message = `a Temporal client retried a call after its connection was closed (open Temporal connections with connectClient from src/temporal/index.ts: its close() waits for the retries under way): ${error.message}`;
    },
  },
});
