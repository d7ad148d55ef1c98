/**
 * Finding a working `temporal` CLI for the embedded dev server, in the order DESIGN §2 fixes:
 * TEMPORAL_CLI_PATH, then `temporal` on PATH, then a copy cached under the state dir, then a
 * one-time install. Every candidate is proven with `--version` before it is used, and when all
 * fail the error lists each thing that was tried so the user can fix the one they prefer.
 */

import { access, constants } from "node:fs/promises";
import { join, resolve } from "node:path";
import { runCommand } from "./run-command.ts";
import { installTemporalCli, TEMPORAL_CLI_VERSION } from "./temporal-cli-install.ts";

export interface FindTemporalCliOptions {
  /** A path the user insisted on (TEMPORAL_CLI_PATH). If it does not work, that is an error. */
  explicitPath?: string | undefined;
  /** Where cached and installed copies live, e.g. `<repo>/.rewind`. */
  stateDir: string;
  /** Receives one line saying which CLI is used and how it was found or installed. */
  log: (line: string) => void;
  /** Environment for child processes (PATH lookup, python3, go). Default: inherited. */
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Returns the path of a working `temporal` binary, installing one under `stateDir` if needed.
 *
 * @example
 * const cli = await findOrInstallTemporalCli({ stateDir: ".rewind", log: console.log });
 */
export async function findOrInstallTemporalCli(options: FindTemporalCliOptions): Promise<string> {
  const { env, log } = options;
  const stateDir = resolve(options.stateDir);
  const verify = async (bin: string): Promise<string> => verifyTemporalCli(bin, env);

  if (options.explicitPath !== undefined && options.explicitPath !== "") {
    const bin = options.explicitPath;
    const version = await verify(bin).catch((error: unknown) => {
      throw new Error(`TEMPORAL_CLI_PATH=${bin} is not a working temporal CLI: ${(error as Error).message}`, {
        cause: error,
      });
    });
    log(`temporal CLI: ${bin} (from TEMPORAL_CLI_PATH; ${version})`);
    return bin;
  }

  const tried: string[] = ["TEMPORAL_CLI_PATH: not set"];
  const onPath = await lookUpOnPath(env);
  if (onPath === undefined) tried.push("`temporal` on PATH: not found");
  else {
    try {
      const version = await verify(onPath);
      log(`temporal CLI: ${onPath} (found on PATH; ${version})`);
      return onPath;
    } catch (error) {
      tried.push(`\`temporal\` on PATH (${onPath}): ${(error as Error).message}`);
    }
  }

  const findCached = async (): Promise<string | undefined> => findCachedTemporalCli(stateDir, env);
  const cached = await findCached();
  if (cached !== undefined) {
    log(`temporal CLI: ${cached} (cached in ${stateDir})`);
    return cached;
  }
  tried.push(`cached copy: none working at ${cachedCandidates(stateDir).join(" or ")}`);

  const started = Date.now();
  const outcome = await installTemporalCli({ stateDir, env, log, findCached, verify });
  if (outcome.path !== undefined) {
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    const how = outcome.reused
      ? "installed by another process meanwhile"
      : `installed v${TEMPORAL_CLI_VERSION} in ${seconds} s`;
    log(`temporal CLI: ${outcome.path} (${how})`);
    return outcome.path;
  }
  tried.push(...outcome.attempts);
  throw new Error(
    `No working temporal CLI found and installing one failed. Tried:\n${tried.map((t) => `  - ${t}`).join("\n")}\n` +
      `Fix one of these, or install the CLI yourself (https://docs.temporal.io/cli) and set TEMPORAL_CLI_PATH.`,
  );
}

/** Throws unless `bin --version` runs and prints a temporal version; returns that line. */
export async function verifyTemporalCli(bin: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await runCommand(bin, ["--version"], { env, timeoutMs: 30_000 });
  const line = stdout.split("\n").find((l) => /^temporal version \S+/.test(l.trim()));
  if (line === undefined) {
    const got = JSON.stringify(stdout.trim());
    throw new Error(`\`${bin} --version\` did not print "temporal version …" (got ${got})`);
  }
  return line.trim();
}

/** Where a previous install left the binary: `go install` target first, then the pip venv. */
export function cachedCandidates(stateDir: string): string[] {
  return [join(stateDir, "bin", "temporal"), join(stateDir, "venv", "bin", "temporal")];
}

async function findCachedTemporalCli(
  stateDir: string,
  env: NodeJS.ProcessEnv | undefined,
): Promise<string | undefined> {
  for (const bin of cachedCandidates(stateDir)) {
    const exists = await access(bin, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (
      exists &&
      (await verifyTemporalCli(bin, env).then(
        () => true,
        () => false,
      ))
    )
      return bin;
  }
  return undefined;
}

/** Resolves `temporal` through PATH the way a shell would, without reading the environment here. */
async function lookUpOnPath(env: NodeJS.ProcessEnv | undefined): Promise<string | undefined> {
  try {
    const { stdout } = await runCommand("/bin/sh", ["-c", "command -v temporal"], { env, timeoutMs: 10_000 });
    const found = stdout.trim();
    return found.startsWith("/") ? found : undefined;
  } catch {
    return undefined;
  }
}
