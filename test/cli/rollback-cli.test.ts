/**
 * Rollback from the `rewind` command, as child processes against a real stack and a billing MCP
 * server: `rewind run … --on-failure rollback --watch` follows a failing script to its rollback,
 * and `rewind runs rollback <id> --reason --by` rolls an open run back and says what it reverted.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRefunded, billingTools } from "../helpers/billing-tools.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { runCli } from "./cli-process.ts";

let stack: RewindStack;
let server: TestMcpServer;
let dir: string;
let toolset: string;
const billing = billingTools();
const cli = (...args: string[]) => runCli(args, { url: stack.api.url, cwd: dir });

beforeAll(async () => {
  [stack, server, dir] = await Promise.all([
    startRewindStack(),
    startMcpServer({ tools: billing.tools }),
    mkdtemp(path.join(tmpdir(), "rewind-rollback-cli-")),
  ]);
  toolset = await registerToolset(stack, {
    mcpServers: { billing: { url: server.url } },
    policies: {
      "billing.charge": {
        revert: { tool: "billing.refund", args: { chargeId: "{{result.id}}", amount: "{{args.amount}}" } },
      },
    },
  });
  await writeFile(
    path.join(dir, "fails.ts"),
    `import { billing } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "frank", amount: 3 });
  throw new Error("no stock");
}
`,
  );
  await writeFile(
    path.join(dir, "waits.ts"),
    `import { billing, waitForSignal } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "grace", amount: 4 });
  await waitForSignal("never");
}
`,
  );
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("rewind and rollback", () => {
  it("run --on-failure rollback --watch follows a failed script to its rollback", async () => {
    const result = await cli("run", "fails.ts", "--toolset", toolset, "--on-failure", "rollback", "--watch");
    expect(result.stdout).toContain("rolled back");
    expect(result.stdout).toContain("1 reverted, 0 not reverted");
    const refunds = billing.state.effects.filter((e) => e.tool === "refund");
    expect(refunds).toHaveLength(1);
    expect(refunds[0]?.key).toMatch(/^run_[0-9A-Za-z]+\/2$/);
    expect((await cli("run", "fails.ts", "--toolset", toolset, "--on-failure", "later")).code).toBe(2);
  });

  it("runs rollback <id> --reason --by rolls an open run back", async () => {
    const started = await cli("run", "waits.ts", "--toolset", toolset, "--json");
    const id = String((JSON.parse(started.stdout) as { id: string }).id);
    await waitFor(
      `run ${id} to charge`,
      async () => (await stack.request("GET", `/v1/runs/${id}/journal`)).body["entries"] as unknown[],
      { timeoutMs: 20_000, until: (entries) => entries.length === 2 },
    );
    const result = await cli("runs", "rollback", id, "--reason", "customer left", "--by", "support");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("rollback requested");
    expect(result.stdout).toContain("(asked for support: customer left)");
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("rolledBack");
    const shown = await cli("runs", "show", id);
    expect(shown.stdout).toContain(`${id}  rolledBack`);
    expect(shown.stdout).toContain("reverted  call 1 billing.charge by call 3 billing.refund");
    expect(allRefunded(billing.state)).toBe(true);
    const again = await cli("runs", "rollback", id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("only an open run can be rolled back");
  });
});
