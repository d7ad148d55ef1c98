/**
 * `.ci/run` (and anyone setting up a fresh clone) calls this to make sure the `temporal` CLI is
 * available before the tests start, so a slow one-time install shows up as its own step instead
 * of a timed-out test hook. Prints the binary's path on stdout; progress goes to stderr.
 *
 * Usage: node src/dev/install-temporal-cli.ts [explicit-cli-path]
 */

import { resolve } from "node:path";
import { findOrInstallTemporalCli } from "./temporal-cli.ts";

const repoRoot = resolve(import.meta.dirname, "..", "..");

try {
  const path = await findOrInstallTemporalCli({
    explicitPath: process.argv[2],
    stateDir: resolve(repoRoot, ".rewind"),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${path}\n`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
