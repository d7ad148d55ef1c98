/**
 * A project of a user of the packages: the tarballs `npm run pack:packages` makes, installed with
 * npm into a fresh folder outside the repository, on a given Node. Commands run in it see only
 * PATH (that Node first) and HOME (npm's cache), as in a user's shell.
 *
 * The install unpacks about 300 MB. Two of them side by side, beside the rest of the suite on two
 * cores, once took over three minutes where one alone takes about 20 s; so a second project on
 * another Node starts from a hard-linked copy of the first (its lockfile and node_modules), and its
 * own npm checks and completes that tree, which takes seconds.
 *
 * The test installs offline: npm resolves the packages' dependency ranges from the registry's
 * metadata of each dependency, which `npm ci` never fetches (the lockfile has the versions), and
 * a request to the registry from inside a test once hung until the install's timeout. `.ci/run`
 * runs this file with `--install` first, which makes the same install online so that npm's cache
 * holds that metadata; the test's install then asks the network nothing.
 *
 * Usage: node test/packages/consumer-project.ts --install
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../helpers/paths.ts";

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ConsumerProject {
  dir: string;
  /** The `node` the project runs on. */
  node: string;
  /** Runs `file args…` in the project with this Node first on PATH; resolves with the exit, whatever it is. */
  run(file: string, args: string[], env?: Record<string, string>): Promise<Exit>;
}

/**
 * How a user's shell reaches the registry: its proxy and the certificate authorities it trusts (a
 * machine behind a TLS-inspecting proxy fails every request with SELF_SIGNED_CERT_IN_CHAIN without
 * them). Everything else of this process's environment stays out.
 */
const NETWORK_ENV =
  /^(https?_proxy|no_proxy|all_proxy|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir|npm_config_(cafile|ca|proxy|https_proxy|noproxy|strict_ssl|registry))$/i;

/** The environment of a user's shell with `node` first on PATH. */
export function shellEnv(node: string, env: Record<string, string> = {}): Record<string, string> {
  const network = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => NETWORK_ENV.test(entry[0]) && entry[1] !== undefined,
    ),
  );
  return {
    ...network,
    PATH: `${path.dirname(node)}${path.delimiter}${process.env["PATH"] ?? ""}`,
    HOME: process.env["HOME"] ?? "",
    ...env,
  };
}

/** How long one command may take unless its caller says otherwise. */
const COMMAND_TIMEOUT_MS = 180_000;
/** How long an npm install may take: it unpacks about 300 MB, beside the rest of the suite. */
export const INSTALL_TIMEOUT_MS = 420_000;
/**
 * How long building and packing both packages may take: two TypeScript compilations of about 35 s
 * each on a quiet machine, which took over 180 s beside CI's other installs.
 */
const PACK_TIMEOUT_MS = 420_000;

/**
 * Runs a command to its end and answers its exit code and output (never rejects on a failed exit);
 * rejects when it could not start or ran past `timeoutMs`, saying which.
 */
export function exec(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<Exit> {
  const { timeoutMs = COMMAND_TIMEOUT_MS, ...spawnOptions } = options;
  const command = `${file} ${args.join(" ")}`;
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { ...spawnOptions, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && error.killed)
          reject(
            new Error(
              `${command}: timed out after ${timeoutMs / 1000} s (killed with ${error.signal ?? "a signal"})\n${stderr}`,
            ),
          );
        else if (error && typeof error.code !== "number") reject(new Error(`${command}: ${error.message}`));
        else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** Builds and packs the packages into `out`; answers the tarballs. */
export async function packPackages(node: string, out: string): Promise<string[]> {
  const built = await exec(
    node,
    ["--disable-warning=ExperimentalWarning", "packages/build.ts", "--pack", "--out", out],
    {
      cwd: REPO_ROOT,
      env: shellEnv(node),
      timeoutMs: PACK_TIMEOUT_MS,
    },
  );
  if (built.code !== 0) throw new Error(`packing failed:\n${built.stdout}${built.stderr}`);
  return (await readdir(out)).filter((name) => name.endsWith(".tgz")).map((name) => path.join(out, name));
}

/**
 * Makes a project in `dir` and installs `tarballs` into it with npm running on `node`; with `from`,
 * the project starts as a hard-linked copy of that one's install (see the header).
 */
export async function createConsumerProject(
  dir: string,
  node: string,
  tarballs: string[],
  from?: ConsumerProject,
): Promise<ConsumerProject> {
  if (from) {
    const copied = await exec("cp", ["-al", from.dir, dir], { cwd: path.dirname(dir), env: shellEnv(node) });
    if (copied.code !== 0) throw new Error(`copying ${from.dir} failed:\n${copied.stderr}`);
  } else {
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, "package.json"),
      `${JSON.stringify({ name: "harness", private: true, type: "module" }, null, 2)}\n`,
    );
  }
  const installed = await exec("npm", ["install", ...tarballs, "--offline", "--no-audit", "--no-fund"], {
    cwd: dir,
    env: shellEnv(node),
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  if (installed.code !== 0) {
    const uncached = /ENOTCACHED/.test(installed.stderr)
      ? " (npm's cache lacks the registry's metadata of a dependency: run `node test/packages/consumer-project.ts --install`, as .ci/run does)"
      : "";
    throw new Error(`npm install --offline on ${node} failed${uncached}:\n${installed.stderr}`);
  }
  await copyFile(path.join(REPO_ROOT, "test/fixtures/package-harness.mjs"), path.join(dir, "harness.mjs"));
  return { dir, node, run: (file, args, env) => exec(file, args, { cwd: dir, env: shellEnv(node, env) }) };
}

/** Each try of the install step's online install, and how many tries. */
const CACHE_INSTALL_ATTEMPT_MS = 300_000;
const CACHE_INSTALL_ATTEMPTS = 2;

/** The end of a command's output, where npm says what it did last. */
function lastLines(output: string, count = 25): string {
  return output.trimEnd().split("\n").slice(-count).join("\n");
}

/**
 * The install step: packs the packages and installs them once with the network allowed, so npm's
 * cache holds the registry's metadata of every dependency (see the header); answers how long it took.
 */
export async function cacheRegistryMetadata(node: string): Promise<number> {
  const started = Date.now();
  const work = await mkdtemp(path.join(tmpdir(), "rewind-packages-cache-"));
  try {
    const tarballs = await packPackages(node, path.join(work, "tarballs"));
    const dir = path.join(work, "project");
    await mkdir(dir);
    await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: "cache", private: true }, null, 2)}\n`);
    // A request that hangs is given up after a minute and tried again, not after npm's five;
    // `--loglevel=http` puts each request in the output, so a stalled install says what it waited on.
    const args = [
      "install",
      ...tarballs,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--fetch-timeout=60000",
      "--loglevel=http",
    ];
    for (let attempt = 1; ; attempt += 1) {
      try {
        const installed = await exec("npm", args, {
          cwd: dir,
          env: shellEnv(node),
          timeoutMs: CACHE_INSTALL_ATTEMPT_MS,
        });
        if (installed.code !== 0)
          throw new Error(`npm install (to cache the registry's metadata) failed:\n${lastLines(installed.stderr)}`);
        return Date.now() - started;
      } catch (error) {
        // A stalled install (a registry request that never answered, or a machine too busy to
        // unpack) is tried once more: what it fetched is in the cache, so the second goes faster.
        const timedOut = error instanceof Error && / timed out after /.test(error.message);
        if (!(error instanceof Error) || !timedOut) throw error;
        const said = `${error.message.split("\n")[0] ?? ""}\n(its last output:)\n${lastLines(error.message)}`;
        if (attempt === CACHE_INSTALL_ATTEMPTS) throw new Error(`${said}\n(after ${attempt} tries)`);
        console.error(`packages: ${said}\ntrying again`);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.main && process.argv.includes("--install")) {
  cacheRegistryMetadata(path.join(REPO_ROOT, "node_modules/node/bin/node")).then(
    (ms) =>
      console.log(
        `packages: the registry's metadata of their dependencies is in npm's cache (${Math.round(ms / 1000)} s)`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
