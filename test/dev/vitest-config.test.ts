/**
 * isolated-vm crashes without `--no-node-snapshot`, so this checks that vitest.config.ts really
 * hands the flag to every forked test worker.
 */

import { expect, it } from "vitest";

it("runs test workers with --no-node-snapshot", () => {
  expect(process.execArgv).toContain("--no-node-snapshot");
});
