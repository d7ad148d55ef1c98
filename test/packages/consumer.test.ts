/**
 * The packages as a user gets them: rewind-sdk and rewind-cli packed into tarballs, installed with
 * npm into a fresh project outside the repository, and used from plain JavaScript on Node 22 and
 * Node 24 against a real stack. A harness importing the SDK by its package name serves host tools
 * (one answers, one throws ToolError), registers a toolset and runs a script that calls both; the
 * packaged `rewind` starts and shows runs of the same API; the declarations type a TypeScript
 * consumer. On a Node older than 22 both `rewind` executables say what to do in one line.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureNode22, nodeMajor } from "../helpers/node22.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import {
  createConsumerProject,
  exec,
  INSTALL_TIMEOUT_MS,
  packPackages,
  shellEnv,
  type ConsumerProject,
} from "./consumer-project.ts";

const NODE_24 = path.join(REPO_ROOT, "node_modules/node/bin/node");

/** A Node older than 22 on PATH (the machine's own, say), to see the executables refuse it; undefined if none. */
async function findOldNode(): Promise<string | undefined> {
  for (const dir of (process.env["PATH"] ?? "").split(path.delimiter)) {
    const node = path.join(dir, "node");
    const major = existsSync(node) ? await nodeMajor(node) : undefined;
    if (major !== undefined && major < 22) return node;
  }
  return undefined;
}
const oldNode = await findOldNode();

let stack: RewindStack;
let work: string;
let tarballs: string[];
const projects = new Map<number, ConsumerProject>();

beforeAll(
  async () => {
    work = await mkdtemp(path.join(tmpdir(), "rewind-packages-"));
    const [node22, packed, started] = await Promise.all([
      ensureNode22((line) => console.log(line)),
      packPackages(NODE_24, path.join(work, "tarballs")),
      startRewindStack(),
    ]);
    stack = started;
    tarballs = packed;
    const node24 = await createConsumerProject(path.join(work, "node24"), NODE_24, tarballs);
    projects.set(24, node24);
    projects.set(22, await createConsumerProject(path.join(work, "node22"), node22, tarballs, node24));
  },
  INSTALL_TIMEOUT_MS * 2 + 60_000,
);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

it("packs rewind-sdk and rewind-cli, compiled JavaScript with the SDK's declarations", async () => {
  const { version } = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
  expect(tarballs.map((file) => path.basename(file)).sort()).toEqual([
    `rewind-cli-${version}.tgz`,
    `rewind-sdk-${version}.tgz`,
  ]);
  const project = projects.get(24) as ConsumerProject;
  const sdk = path.join(project.dir, "node_modules/rewind-sdk/dist/sdk");
  expect(await readdir(sdk)).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "host-tool-worker.js"]));
  const everything = await readdir(path.join(project.dir, "node_modules/rewind-sdk"), { recursive: true });
  expect(everything.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  // The optional isolated-vm (for replay) is not installed, and the SDK imports without it.
  expect(existsSync(path.join(project.dir, "node_modules/isolated-vm"))).toBe(false);
});

describe.each([22, 24])("on Node %i", (major) => {
  const project = () => projects.get(major) as ConsumerProject;

  it("runs a harness that imports rewind-sdk, serves host tools and runs a script calling them", async () => {
    const taskQueue = `harness-${randomUUID()}`;
    const ran = await project().run(project().node, ["harness.mjs", stack.api.url, stack.address, taskQueue]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    const { id, run } = JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "") as {
      id: string;
      run: { status: string; result: unknown };
    };
    const expected = {
      greeted: {
        greeting: "hello Ada",
        idempotencyKey: `${id}/1`,
        node: expect.stringMatching(new RegExp(`^${major}\\.`)),
      },
      refused: "refused",
    };
    expect(run).toMatchObject({ status: "completed", result: expected });
    // The run is the stack's: its API reports the same.
    expect((await stack.request("GET", `/v1/runs/${id}`)).body).toMatchObject({
      status: "completed",
      result: expected,
    });
  });

  it("says what replaying needs when isolated-vm is not installed", async () => {
    const replayed = await project().run(project().node, [
      "--input-type=module",
      "-e",
      'import { replayCassette } from "rewind-sdk"; await replayCassette({ cassette: {} }).catch((e) => console.log(e.message));',
    ]);
    expect(replayed.stdout).toMatch(/^replaying needs the isolated-vm package \(npm install isolated-vm;/);
  });

  it("runs the packaged rewind against the API", async () => {
    const rewind = path.join(project().dir, "node_modules/.bin/rewind");
    const env = { REWIND_URL: stack.api.url };
    const help = await project().run(rewind, ["--help"], env);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toContain("toolsets register <file.json|yaml>");

    await writeFile(
      path.join(project().dir, "double.ts"),
      "export default async function main(input: { n: number }) {\n  return { doubled: input.n * 2 };\n}\n",
    );
    const started = await project().run(rewind, ["run", "double.ts", "--input", '{"n":21}', "--watch", "--json"], env);
    expect(started.stderr).toBe("");
    const run = JSON.parse(started.stdout) as { id: string; status: string; result: unknown };
    expect(run).toMatchObject({ status: "completed", result: { doubled: 42 } });
    const shown = await project().run(rewind, ["runs", "show", run.id, "--json"], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: run.id, status: "completed", result: { doubled: 42 } });

    const dev = await project().run(rewind, ["dev"], env);
    expect(dev.code).toBe(1);
    expect(dev.stderr).toMatch(/^rewind: "dev" runs Rewind itself, from its repository \(`npm start` there/);
  });
});

it("types a TypeScript consumer with the SDK's declarations", async () => {
  const project = projects.get(24) as ConsumerProject;
  await writeFile(
    path.join(project.dir, "check.ts"),
    [
      'import { createApiClient, ToolError, type HostTool } from "rewind-sdk";',
      'const api = createApiClient({ url: "http://127.0.0.1:8787" });',
      'const tool: HostTool = async (args, ctx) => ({ key: ctx.idempotencyKey, n: args["n"] });',
      'const refused = new ToolError("refused", "no");',
      "// @ts-expect-error the client's url is a string",
      "createApiClient({ url: 8787 });",
      "// @ts-expect-error a run's status is one of the API's states",
      'const status: "sleeping" = (await api.getRun("run_x")).status;',
      "export { tool, refused, status };",
      "",
    ].join("\n"),
  );
  const options = { module: "nodenext", target: "es2023", strict: true, noEmit: true, skipLibCheck: true, types: [] };
  await writeFile(
    path.join(project.dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: options, files: ["check.ts"] }),
  );
  const checked = await project.run(project.node, ["node_modules/typescript/bin/tsc", "-p", "."]);
  expect(checked.stdout).toBe("");
  expect(checked.code).toBe(0);
});

describe.skipIf(oldNode === undefined)(`on a Node older than 22 (${oldNode ?? "none on PATH"})`, () => {
  const refuses = (exit: { code: number | null; stdout: string; stderr: string }, needs: RegExp) => {
    expect(exit.code).toBe(1);
    expect(exit.stdout).toBe("");
    expect(exit.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(exit.stderr).toMatch(needs);
    expect(exit.stderr).not.toMatch(/\n\s+at |ERR_/);
  };

  it("the packaged rewind says it needs Node 22 and how to get it", async () => {
    const project = projects.get(24) as ConsumerProject;
    const exit = await exec(oldNode ?? "", [path.join(project.dir, "node_modules/.bin/rewind"), "--help"], {
      cwd: project.dir,
      env: shellEnv(oldNode ?? ""),
    });
    refuses(exit, /^rewind: needs Node\.js 22 or newer, .* is Node\.js v\d+\..*install Node\.js 22\+/);
  });

  it("the repository's bin/rewind.js says it needs Node 22.18 and to use npx rewind or npm start", async () => {
    const exit = await exec(oldNode ?? "", [path.join(REPO_ROOT, "bin/rewind.js"), "--help"], {
      cwd: REPO_ROOT,
      env: shellEnv(oldNode ?? ""),
    });
    refuses(exit, /^rewind: needs Node\.js 22\.18 or newer, .*`npx rewind …` or `npm start`/);
  });
});
