/**
 * Builds the npm packages of packages/ (rewind-sdk, rewind-cli) from src/: TypeScript compiled to
 * JavaScript (and the SDK's declarations) under each package's dist/, with the `.ts` import
 * specifiers rewritten to `.js`. The server itself keeps running from the sources. After each
 * build the package's imports are checked against its manifest (see package-imports.ts), and with
 * `--pack` each package is packed into a tarball.
 *
 * Usage: node packages/build.ts [--pack [--out <dir>]]   (default out: packages/tarballs/)
 */
import { mkdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import { runCommand } from "../src/dev/run-command.ts";
import { readPackageImports } from "./package-imports.ts";

const PACKAGES_DIR = import.meta.dirname;
const REPO_ROOT = path.dirname(PACKAGES_DIR);

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** Each package's folder and the compiled entry points its imports are followed from. */
const PACKAGES = [
  { dir: "sdk", entries: ["dist/sdk/index.js"], declarations: true },
  { dir: "cli", entries: ["dist/cli/package-bin.js", "dist/cli/package-main.js"], declarations: false },
];

async function readManifest(file: string): Promise<Manifest> {
  return JSON.parse(await readFile(file, "utf8")) as Manifest;
}

/** Compares what the build imports with what the manifest installs; answers the problems, one per line. */
async function checkManifest(dir: string, entries: string[], declarations: boolean, root: Manifest): Promise<string[]> {
  const manifest = await readManifest(path.join(dir, "package.json"));
  const imports = await readPackageImports(
    entries.map((entry) => path.join(dir, entry)),
    declarations,
  );
  const dependencies = manifest.dependencies ?? {};
  const peers = manifest.peerDependencies ?? {};
  const optional = (name: string) => manifest.peerDependenciesMeta?.[name]?.optional === true;
  const rootRanges = { ...root.devDependencies, ...root.dependencies };
  const used = new Set([...imports.eager, ...imports.lazy, ...imports.types]);
  const problems: string[] = [];
  for (const name of used)
    if (!(name in dependencies) && !(name in peers)) problems.push(`imports ${name}, which it does not depend on`);
  for (const name of [...Object.keys(dependencies), ...Object.keys(peers)]) {
    if (!used.has(name)) problems.push(`depends on ${name}, which it does not import`);
    const range = dependencies[name] ?? peers[name];
    if (range !== rootRanges[name]) problems.push(`asks for ${name}@${range}, the repository uses ${rootRanges[name]}`);
  }
  for (const name of imports.eager)
    if (optional(name))
      problems.push(`loads the optional ${name} as soon as it is imported (import() it on first use)`);
  if (manifest.version !== root.version)
    problems.push(`is version ${manifest.version}, the repository ${root.version}`);
  return problems.map((problem) => `${manifest.name} ${problem}`);
}

async function build(tsc: string, dir: string): Promise<void> {
  await rm(path.join(dir, "dist"), { recursive: true, force: true });
  await runCommand(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.build.json")], { timeoutMs: 5 * 60_000 });
}

/** Packs the package in `dir` into `out`; answers the tarball's path. */
async function pack(dir: string, out: string): Promise<string> {
  await mkdir(out, { recursive: true });
  const { stdout } = await runCommand("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: dir,
    timeoutMs: 2 * 60_000,
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (!packed) throw new Error(`npm pack in ${dir} reported no tarball`);
  return path.join(out, packed.filename);
}

/** Builds, checks and (with `pack`) packs one package; answers what it did. */
async function release(tsc: string, spec: (typeof PACKAGES)[number], root: Manifest, out: string | undefined) {
  const packageDir = path.join(PACKAGES_DIR, spec.dir);
  const started = Date.now();
  await build(tsc, packageDir);
  const problems = await checkManifest(packageDir, spec.entries, spec.declarations, root);
  if (problems.length > 0) throw new Error(`packages/${spec.dir}/package.json:\n  ${problems.join("\n  ")}`);
  const built = `built packages/${spec.dir}/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`;
  return out === undefined ? built : `${built}, packed ${await pack(packageDir, out)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pack: { type: "boolean" }, out: { type: "string" } } });
  const out = values.pack ? path.resolve(values.out ?? path.join(PACKAGES_DIR, "tarballs")) : undefined;
  const root = await readManifest(path.join(REPO_ROOT, "package.json"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  // The packages share no output, so they build side by side.
  for (const line of await Promise.all(PACKAGES.map((spec) => release(tsc, spec, root, out)))) console.log(line);
}

main().catch((error: unknown) => {
  console.error(`build: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
