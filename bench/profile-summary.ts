/**
 * Reads the `.cpuprofile` files that `npm run bench -- --profile` (or `node --cpu-prof`) writes
 * and prints where the CPU time went: self time by area (a package under node_modules, a folder
 * of src/, Node's internals, GC, idle) and the top functions by self time.
 *
 *   npx node bench/profile-summary.ts bench/results/profiles-<timestamp> [--top=25]
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function areaOf(url: string, name: string): string {
  if (name === "(garbage collector)") return "(gc)";
  if (name === "(idle)") return "(idle)";
  if (name === "(program)") return "(program: native, not JS)";
  if (url === "") return "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1] ?? ""}` : (rest[0] ?? url);
  }
  const src = url.indexOf("/src/");
  if (src >= 0) return `src/${url.slice(src + 5).split("/")[0] ?? ""}`;
  if (url.startsWith("node:")) return "node: internals";
  const bench = url.indexOf("/bench/");
  if (bench >= 0) return "bench";
  return url.length > 60 ? `…${url.slice(-60)}` : url;
}

async function profilesIn(target: string): Promise<string[]> {
  if ((await stat(target)).isDirectory()) {
    return (await readdir(target)).filter((f) => f.endsWith(".cpuprofile")).map((f) => path.join(target, f));
  }
  return [target];
}

function summarize(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${functionName || "(anonymous)"}  ${area}${url && !url.includes("node_modules") ? `:${lineNumber + 1}` : ""}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const pct = (us: number) =>
    `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms`;
  const lines = [`  wall ${(total / 1e6).toFixed(1)} s`, "  by area:"];
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${pct(us)}  ${area}`);
  lines.push("  top functions (self time):");
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`    ${pct(us)}  ${name}`);
  return lines.join("\n");
}

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 25);
const targets = args.filter((a) => !a.startsWith("--"));
if (targets.length === 0) {
  process.stderr.write("usage: npx node bench/profile-summary.ts <file.cpuprofile | folder>… [--top=25]\n");
  process.exit(2);
}
for (const target of targets) {
  for (const file of await profilesIn(target)) {
    const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
    process.stdout.write(`${path.basename(file)}\n${summarize(profile, top)}\n\n`);
  }
}
