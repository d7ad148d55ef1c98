/**
 * The cluster checks (`npm run test:cluster`): the files of test/cluster/ against the self-hosted
 * Temporal cluster that scripts/temporal-cluster.sh started, whose settings it wrote to
 * .rewind/cluster-checks.json (read by test/cluster/cluster-global-setup.ts). Not part of
 * `npm test`: building the server takes minutes. The two files run side by side, each in a
 * process of its own, with the same flags as the suite's workers.
 */
import path from "node:path";
import { defineConfig } from "vitest/config";

process.env["NODE_COMPILE_CACHE"] ??= path.resolve(import.meta.dirname, ".rewind", "node-compile-cache");

export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["test/cluster/cluster-global-setup.ts"],
    pool: "forks",
    execArgv: ["--no-node-snapshot"],
    maxWorkers: 2,
    testTimeout: 600_000,
    hookTimeout: 180_000,
  },
});
