/**
 * Saving a run's script as a stored workflow (`POST /v1/runs/{id}/save`): it is stored like
 * `POST /v1/workflows` stores the same script, a toolset that pins it shows it under `workflows`,
 * and a new run starts it as a child. Saving against another toolset is refused when the script
 * does not type-check against it, or when the run called — through a name computed at run time —
 * a tool that toolset lacks, the call carried over by continue-as-new included. The input type the
 * script declares is stored with it, and scripts starting it are type-checked against that type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
/** `svc.echo` and `svc.ping`. */
let both: string;
/** The same server with `svc.echo` only. */
let echoOnly: string;

beforeAll(async () => {
  [stack, server] = await Promise.all([
    // Low enough that the 20-call run below continues as new; the other runs stay in one execution.
    startRewindStack({ env: { REWIND_CONTINUE_AS_NEW_EVENTS: "60" } }),
    startMcpServer({ tools: [echoTool(), echoTool("ping")] }),
  ]);
  both = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
  echoOnly = await registerToolset(stack, { mcpServers: { svc: { url: server.url, tools: { include: ["echo"] } } } });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const GREET = `import { svc } from "rewind:tools";
export default async function greet(input: { name: string }) {
  const echoed = (await svc.echo({ message: \`hello \${input.name}\` })) as { args: { message: string } };
  return echoed.args.message;
}`;

/** Picks the tool from its input: the type-checker sees both, only the journal says which it called. */
const PICK_THEN_ECHO = `import { svc } from "rewind:tools";
export default async function main(input: { tool: "echo" | "ping"; rounds: number }) {
  await svc[input.tool]({ message: "first" });
  for (let i = 0; i < input.rounds; i++) await svc.echo({ message: String(i) });
  return input.tool;
}`;

async function completedRun(body: { script: string; toolset?: string; input?: unknown }): Promise<string> {
  const id = await startRun(stack, body);
  const done = await waitForRun(stack, id, 90_000);
  expect(done.status, JSON.stringify(done.error)).toBe("completed");
  return id;
}

function save(runId: string, body: unknown) {
  return stack.request("POST", `/v1/runs/${runId}/save`, body);
}

describe("POST /v1/runs/{id}/save", () => {
  it("stores a completed run's script that a new run then starts through workflows", async () => {
    const runId = await completedRun({ script: GREET, toolset: both, input: { name: "ada" } });
    const saved = await save(runId, { name: "greet", description: "Greets someone by name" });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toEqual({
      id: expect.stringMatching(/^wf_[0-9a-f]{64}$/),
      name: "greet",
      toolset: both,
      description: "Greets someone by name",
    });
    const id = String(saved.body.id);

    // Stored like POST /v1/workflows stores it: the same script hash, the run's toolset, the description.
    const shown = await stack.request("GET", `/v1/workflows/${id}`);
    const stored = await stack.request("POST", "/v1/workflows", { name: "greet", script: GREET, toolset: both });
    expect(stored.status).toBe(201);
    expect(shown.body).toEqual({
      id,
      name: "greet",
      toolset: both,
      scriptHash: (await stack.request("GET", `/v1/workflows/${String(stored.body.id)}`)).body.scriptHash,
      description: "Greets someone by name",
      inputType: "{ name: string; }",
    });
    // Without a description, the save has the content address the store route gives the same script.
    const plain = await save(runId, { name: "greet" });
    expect(plain.status).toBe(200);
    expect(plain.body.id).toBe(stored.body.id);

    // The same save again is the same stored script; another description is another one.
    const again = await save(runId, { name: "greet", description: "Greets someone by name" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(id);
    const other = await save(runId, { name: "greet", description: "Says hello" });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(id);

    const pinning = await registerToolset(stack, { base: both, workflows: { greet: id } });
    const dts = await fetch(`${stack.api.url}/v1/toolsets/${pinning}/declarations?format=dts`);
    expect(dts.status).toBe(200);
    expect(await dts.text()).toMatch(/export const workflows: \{\s+greet: \{ start\(/);
    const prompt = await fetch(`${stack.api.url}/v1/toolsets/${pinning}/declarations?format=prompt`);
    expect(await prompt.text()).toContain("workflows.greet.start(");
    const parent = await completedRun({
      toolset: pinning,
      script: `import { workflows } from "rewind:tools";
export default async () => {
  const child = await workflows.greet.start({ name: "grace" });
  return { child: child.runId, said: await child.result() };
};`,
    });
    const result = (await stack.request("GET", `/v1/runs/${parent}`)).body.result as { child: string; said: string };
    expect(result.said).toBe("hello grace");
    expect(await waitForRun(stack, result.child)).toMatchObject({ status: "completed", toolset: both });
  }, 180_000);

  it("keeps the input type the script declares: the declarations show it and starts are checked against it", async () => {
    const script = `import { svc } from "rewind:tools";
type Input = { repo: string; limit?: number };
export default async function main(input: Input) {
  await svc.echo({ message: input.repo });
  return \`\${input.repo}:\${input.limit ?? 10}\`;
}`;
    const runId = await completedRun({ script, toolset: both, input: { repo: "rewind" } });
    const saved = await save(runId, { name: "scan" });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const id = String(saved.body.id);
    const shown = await stack.request("GET", `/v1/workflows/${id}`);
    expect(shown.body.inputType).toBe("{ repo: string; limit?: number; }");
    // Stored from its source, the same script has the same type and so the same content address.
    const stored = await stack.request("POST", "/v1/workflows", { name: "scan", script, toolset: both });
    expect(stored.body.id).toBe(id);

    const pinning = await registerToolset(stack, { base: both, workflows: { scan: id } });
    const dts = await (await fetch(`${stack.api.url}/v1/toolsets/${pinning}/declarations?format=dts`)).text();
    expect(dts).toContain("scan: { start(input: { repo: string; limit?: number; }): Promise<");
    const prompt = await (await fetch(`${stack.api.url}/v1/toolsets/${pinning}/declarations?format=prompt`)).text();
    expect(prompt).toContain("workflows.scan.start(input: { repo: string, limit?: number }) → ");

    const starting = (input: string) => `import { workflows } from "rewind:tools";
export default async () => {
  const child = await workflows.scan.start(${input});
  return await child.result();
};`;
    for (const wrong of ["{ repo: 42 }", "{ limit: 1 }", "", '{ repo: "a", extra: true }']) {
      const refused = await stack.request("POST", "/v1/runs", { script: starting(wrong), toolset: pinning });
      expect(refused.status, wrong).toBe(422);
      expect(refused.body.error, wrong).toMatchObject({ code: "typeCheckFailed" });
    }
    const parent = await completedRun({ script: starting('{ repo: "rewind", limit: 3 }'), toolset: pinning });
    expect((await stack.request("GET", `/v1/runs/${parent}`)).body.result).toBe("rewind:3");
  }, 180_000);

  it("saves a run that is still running", async () => {
    const script = `import { waitForSignal } from "rewind:tools";
export default async () => ({ got: await waitForSignal<number>("go") });`;
    const runId = await startRun(stack, { script });
    const saved = await save(runId, { name: "waiter" });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect((await stack.request("GET", `/v1/runs/${runId}`)).body.status).toBe("running");
    await stack.request("POST", `/v1/runs/${runId}/cancel`);
  });

  it("pins another toolset the script fits, and refuses one the script does not type-check against", async () => {
    const echoRun = await completedRun({ script: GREET, toolset: both, input: { name: "ada" } });
    // Once runs of \`both\` recorded echo's results, its declarations type them and echoOnly's do not:
    // that is no missing tool, and the save goes through.
    await waitFor(
      "the declarations of both to show echo's observed result",
      async () => (await fetch(`${stack.api.url}/v1/toolsets/${both}/declarations?format=dts`)).text(),
      { timeoutMs: 20_000, intervalMs: 250, until: (dts) => dts.includes("@observed") },
    );
    const moved = await save(echoRun, { name: "greet", toolset: echoOnly });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    expect(moved.body.toolset).toBe(echoOnly);

    const pingRun = await completedRun({
      toolset: both,
      script: `import { svc } from "rewind:tools";
export default async () => svc.ping({ message: "hi" });`,
    });
    const refused = await save(pingRun, { name: "pinger", toolset: echoOnly });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: "typeCheckFailed" });
    expect(String(refused.body.error?.message)).toContain("ping");
    expect(refused.body.error?.details).toEqual([
      expect.objectContaining({ line: 2, message: expect.stringContaining("'ping'") as unknown }),
    ]);
    // On its own toolset it is saved.
    expect((await save(pingRun, { name: "pinger" })).status).toBe(201);
  }, 120_000);

  it("refuses a toolset lacking a tool the journal shows the run called, across continue-as-new", async () => {
    const pinged = await completedRun({ script: PICK_THEN_ECHO, toolset: both, input: { tool: "ping", rounds: 20 } });
    const executions = await waitFor(
      `more than one execution of ${pinged}`,
      async () => {
        let count = 0;
        for await (const _ of stack.client.workflow.list({ query: `WorkflowId = '${pinged}'` })) count++;
        return count;
      },
      { timeoutMs: 10_000, intervalMs: 250, until: (count) => count > 1 },
    );
    expect(executions).toBeGreaterThan(1);
    const refused = await save(pinged, { name: "pick", toolset: echoOnly });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: "toolsMissing",
      details: { toolset: echoOnly, tools: ["svc.ping"] },
    });
    expect((await save(pinged, { name: "pick" })).status).toBe(201);

    // The same script, having called only echo, fits the smaller toolset.
    const echoed = await completedRun({ script: PICK_THEN_ECHO, toolset: both, input: { tool: "echo", rounds: 0 } });
    const saved = await save(echoed, { name: "pick", toolset: echoOnly });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }, 180_000);

  it("answers 404 for an unknown run or toolset and 400 for a bad name", async () => {
    const unknown = await save("run_0123456789ABCDEFGHJK", { name: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "notFound" });
    expect((await save("not-a-run", { name: "x" })).status).toBe(404);

    const runId = await completedRun({ script: "export default async () => 1;" });
    for (const name of ["not-an-identifier", "", "x".repeat(65)]) {
      const bad = await save(runId, { name });
      expect(bad.status, name).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "badRequest" });
    }
    expect((await save(runId, {})).status).toBe(400);
    expect((await save(runId, { name: "one", extra: true })).status).toBe(400);
    const noToolset = await save(runId, { name: "one", toolset: `ts_${"0".repeat(64)}` });
    expect(noToolset.status).toBe(404);
    expect(String(noToolset.body.error?.message)).toContain("toolset");
  }, 60_000);
});
