#!/usr/bin/env node
// Runs the TypeScript CLI on this Node with the flags the sandbox needs: isolated-vm requires
// --no-node-snapshot, and the sources run through Node's built-in type stripping, which is on by
// default from Node 22.18 (and 23.6). On an older Node it says so in one line and what to do,
// where Node itself would fail on the first `.ts` file with a stack trace.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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
// The IPC channel is how the child learns this wrapper died, even by SIGKILL (src/cli/stop-signals.ts).
const child = spawn(
  process.execPath,
  ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", entry, ...process.argv.slice(2)],
  { stdio: ["inherit", "inherit", "inherit", "ipc"] },
);
// Signals are the child's to act on (a worker drains): this wrapper only passes them on, and ends
// when the child does, with its exit code.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
// Under npx or `npm run` (npm sets npm_command), npm starts `sh -c rewind …`, which starts this
// wrapper; npm passes SIGINT and SIGTERM on, but a SIGKILL to npm would leave the shell, this
// wrapper and the worker running. So here, and only here, the wrapper watches its parent and its
// parent's parent (read from /proc, on Linux) and stops the child when either goes away. Started
// any other way (a supervisor, nohup, a shell) it does not: outliving the shell that started it is
// what nohup is for. Polled: a parent's death sends this process nothing it could wait on.
const watched = process.env["npm_command"] ? ancestors() : [];
if (watched.length > 0) {
  setInterval(() => {
    if (ancestors().slice(0, watched.length).join() !== watched.join()) child.kill("SIGTERM");
  }, 1_000).unref();
}
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
  // The IPC channel and the timer must not keep this process alive once the child is gone.
  if (child.connected) child.disconnect();
});

/** This process's parent and grandparent; fewer where /proc cannot tell (not Linux). */
function ancestors() {
  const parent = process.ppid;
  try {
    // `pid (comm) state ppid …`: the command name may hold spaces and parentheses, the rest does not.
    const stat = readFileSync(`/proc/${parent}/stat`, "utf8");
    const grandparent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(grandparent) && grandparent > 1 ? [parent, grandparent] : [parent];
  } catch {
    return [parent];
  }
}
