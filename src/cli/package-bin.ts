#!/usr/bin/env node
/**
 * The packaged `rewind` executable (packages/cli). On a Node older than 22 it says so in one line
 * and what to do, where the CLI's modules would fail with a stack trace; otherwise it runs the CLI
 * (package-main.js, beside this file once compiled) with the flag isolated-vm needs for
 * `rewind replay`. The repository's own executable is bin/rewind.js, which runs the sources.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const MINIMUM_NODE_MAJOR = 22;

if (Number(process.versions.node.split(".")[0]) < MINIMUM_NODE_MAJOR) {
  process.stderr.write(
    `rewind: needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and ${process.execPath} is Node.js ${process.version}; install Node.js ${MINIMUM_NODE_MAJOR}+ (https://nodejs.org, or \`nvm install ${MINIMUM_NODE_MAJOR}\`) and run rewind with it\n`,
  );
  process.exit(1);
}

const entry = fileURLToPath(new URL("package-main.js", import.meta.url));
const child = spawn(
  process.execPath,
  ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", entry, ...process.argv.slice(2)],
  { stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
