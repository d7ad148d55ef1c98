#!/usr/bin/env node
// Runs the TypeScript CLI on this Node with the flags the sandbox needs: isolated-vm requires
// --no-node-snapshot, and the sources run through Node's built-in type stripping.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const child = spawn(
  process.execPath,
  ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", entry, ...process.argv.slice(2)],
  { stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
