/**
 * Node.js 22, the oldest Node the packages support, for the tests that run them on it: the npm
 * package `node@22` (the way the repository gets its Node 24) installed once into `.rewind/node22/`
 * under the cross-process install lock. `.ci/run` calls this file with `--install` before the
 * tests, so the download is its own step and not a timed-out test hook.
 *
 * Usage: node test/helpers/node22.ts --install
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { acquireInstallLock } from "../../src/dev/install-lock.ts";
import { runCommand } from "../../src/dev/run-command.ts";
import { REPO_ROOT } from "./paths.ts";

const INSTALL_DIR = path.join(REPO_ROOT, ".rewind", "node22");
const NODE = path.join(INSTALL_DIR, "node_modules", "node", "bin", "node");

/** The Node major version of `node`, or undefined when it does not run. */
export async function nodeMajor(node: string): Promise<number | undefined> {
  try {
    const { stdout } = await runCommand(node, ["--version"], { timeoutMs: 30_000 });
    const major = Number(/^v(\d+)\./.exec(stdout.trim())?.[1]);
    return Number.isInteger(major) ? major : undefined;
  } catch {
    return undefined;
  }
}

/** Installs Node 22 into `.rewind/node22/` unless it is there; answers its `node` binary. */
export async function ensureNode22(log: (line: string) => void = () => {}): Promise<string> {
  if ((await nodeMajor(NODE)) === 22) return NODE;
  await mkdir(INSTALL_DIR, { recursive: true });
  const release = await acquireInstallLock(`${INSTALL_DIR}-install.lock`, {
    onWait: (pid) => log(`node22: waiting for another install to finish (pid ${pid ?? "?"})`),
  });
  try {
    if ((await nodeMajor(NODE)) === 22) return NODE;
    const started = Date.now();
    log(`node22: installing node@22 from the npm registry into ${INSTALL_DIR} (one time)`);
    // The `node` package fetches its platform's binary in an install script, which npm runs only when allowed.
    const manifest = { name: "rewind-node22", private: true, allowScripts: { node: true } };
    await writeFile(path.join(INSTALL_DIR, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    await runCommand("npm", ["install", "node@22", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: INSTALL_DIR,
      timeoutMs: 10 * 60_000,
    });
    const major = await nodeMajor(NODE);
    if (major !== 22) throw new Error(`node22: after installing, ${NODE} reports Node ${major ?? "missing"}, not 22`);
    log(`node22: installed in ${Math.round((Date.now() - started) / 1000)} s`);
    return NODE;
  } finally {
    await release();
  }
}

if (import.meta.main && process.argv.includes("--install")) {
  ensureNode22((line) => console.log(line)).then(
    (node) => console.log(`node22: ${node}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    },
  );
}
