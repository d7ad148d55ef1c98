#!/usr/bin/env node
// Runs the TypeScript CLI on this Node with the flags the sandbox needs: isolated-vm requires
// --no-node-snapshot, and the sources run through Node's built-in type stripping, which is on by
// default from Node 22.18 (and 23.6). On an older Node it says so in one line and what to do,
// where Node itself would fail on the first `.ts` file with a stack trace.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18) || (major === 23 && minor < 6)) {
  process.stderr.write(
    `rewind: needs Node.js 22.18 or newer, and ${process.execPath} is Node.js ${process.version}; ` +
      "in the repository run `npx rewind …` or `npm start`, which use the Node 24 that `npm install` brings, " +
      "or install Node.js 22.18+ (https://nodejs.org, or `nvm install 22`)\n",
  );
  process.exit(1);
}

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
