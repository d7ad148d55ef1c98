/**
 * Installs pinned Python packages into a venv under `.rewind/` once, for the test helpers that run
 * Python servers (moto in s3-server.ts, the Python MCP SDK in python-mcp.ts): one copy of the
 * check, the cross-process install lock (test workers and `.ci/run` may start installing at the
 * same time) and the pip install, instead of one per helper.
 *
 * The install is checked by running a probe in the venv's python that imports what the helper
 * needs and prints the installed version; nothing is installed when it prints the expected one.
 */
import { access, mkdir } from "node:fs/promises";
import path from "node:path";
import { acquireInstallLock } from "../../src/dev/install-lock.ts";
import { runCommand } from "../../src/dev/run-command.ts";

export interface VenvSpec {
  /** Prefix of the log lines and errors, e.g. "moto". */
  name: string;
  /** The venv's directory; its lock is `<venvDir>-install.lock` next to it. */
  venvDir: string;
  /** pip requirements, pinned. */
  requirements: string[];
  /** Python code that imports what is needed and prints the installed version. */
  probe: string;
  /** What `probe` must print for the install to count as done. */
  expectedVersion: string;
  log?: (line: string) => void;
}

/** The venv's python. */
function venvPython(venvDir: string): string {
  return path.join(venvDir, "bin", "python");
}

async function installedVersion(python: string, probe: string): Promise<string | undefined> {
  try {
    await access(python);
    const { stdout } = await runCommand(python, ["-c", probe], { timeoutMs: 60_000 });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** Installs `requirements` into `venvDir` unless `probe` already prints `expectedVersion`; returns the venv's python. */
export async function ensureVenv(spec: VenvSpec): Promise<string> {
  const { name, venvDir, requirements, probe, expectedVersion, log = () => {} } = spec;
  const python = venvPython(venvDir);
  if ((await installedVersion(python, probe)) === expectedVersion) return python;
  await mkdir(path.dirname(venvDir), { recursive: true });
  const release = await acquireInstallLock(`${venvDir}-install.lock`, {
    onWait: (pid) => log(`${name}: waiting for another install to finish (pid ${pid ?? "?"})`),
  });
  try {
    if ((await installedVersion(python, probe)) === expectedVersion) return python;
    const started = Date.now();
    log(`${name}: installing ${requirements.join(" ")} with pip into ${venvDir} (one time, about 20 s)`);
    await runCommand("python3", ["-m", "venv", venvDir], { timeoutMs: 120_000 });
    // --no-compile: pip's byte-compiling of every module was most of an install's CPU; Python
    // compiles the few modules a test imports when it first imports them.
    await runCommand(
      python,
      ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", "--no-compile", ...requirements],
      {
        timeoutMs: 10 * 60_000,
      },
    );
    const version = await installedVersion(python, probe);
    if (version !== expectedVersion) {
      throw new Error(
        `${name}: after installing, ${python} reports version ${version ?? "missing"}, not ${expectedVersion}`,
      );
    }
    log(`${name}: installed in ${Math.round((Date.now() - started) / 1000)} s`);
    return python;
  } finally {
    await release();
  }
}
