/**
 * Registering a policy's `revert`: pinned as given when its tool is in the toolset and its
 * template parses and fits the revert tool's schema; refused otherwise with every problem listed
 * (400 for the request's own mistakes, 422 for what the revert tool's pinned schema refuses).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { billingTools } from "../helpers/billing-tools.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";

let stack: RewindStack;
let server: TestMcpServer;

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({ tools: billingTools().tools });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const REFUND = { chargeId: "{{result.id}}", amount: "{{args.amount}}", reason: "rollback" };
const register = (revert: unknown) =>
  stack.request("POST", "/v1/toolsets", {
    mcpServers: { billing: { url: server.url } },
    policies: { "billing.charge": { revert } },
  });

describe("revert policies", () => {
  it("pins a revert whose tool is in the toolset and whose template fits, and shows it", async () => {
    const { status, body } = await register({ tool: "billing.refund", args: REFUND });
    expect(status).toBe(201);
    const document = body["document"] as { policies: Record<string, unknown> };
    expect(document.policies["billing.charge"]).toEqual({ revert: { tool: "billing.refund", args: REFUND } });
    const read = await stack.request("GET", `/v1/toolsets/${String(body.id)}`);
    expect((read.body["document"] as typeof document).policies["billing.charge"]).toEqual({
      revert: { tool: "billing.refund", args: REFUND },
    });
  });

  it("refuses a revert tool the toolset lacks (400)", async () => {
    const { status, body } = await register({ tool: "billing.void", args: {} });
    expect(status).toBe(400);
    expect(body.error?.code).toBe("badRequest");
    expect(body.error?.message).toContain('"billing.void" is not a tool of this toolset');
    expect(body.error?.details).toEqual({
      field: "policies",
      problems: [
        {
          at: 'policies["billing.charge"].revert.tool',
          message: '"billing.void" is not a tool of this toolset (write group.tool)',
        },
      ],
    });
  });

  it("lists every problem of a template that does not parse (400)", async () => {
    const { status, body } = await register({
      tool: "billing.refund",
      args: { chargeId: "ch {{result.id}}", amount: "{{env.AMOUNT}}" },
    });
    expect(status).toBe(400);
    const problems = (body.error?.details as { problems: { at: string }[] }).problems;
    expect(problems.map((p) => p.at)).toEqual([
      'policies["billing.charge"].revert.args.chargeId',
      'policies["billing.charge"].revert.args.amount',
    ]);
  });

  it("refuses a template without args (400) and a revert with unknown fields (400)", async () => {
    expect((await register({ tool: "billing.refund" })).status).toBe(400);
    const extra = await register({ tool: "billing.refund", args: REFUND, when: "always" });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body.error?.details)).toContain("when");
  });

  it("refuses a template the revert tool's schema plainly refuses (422), naming each key", async () => {
    const { status, body } = await register({
      tool: "billing.refund",
      args: { amount: "{{args.amount}}", reason: "oops", note: 3 },
    });
    expect(status).toBe(422);
    expect(body.error?.code).toBe("toolsetRejected");
    expect((body.error?.details as { problems: unknown[] }).problems).toEqual([
      {
        at: 'policies["billing.charge"].revert.args.chargeId',
        message: "is required by the revert tool's input schema",
      },
      {
        at: 'policies["billing.charge"].revert.args.reason',
        message: 'is not one of ["rollback","customer"], the revert tool\'s schema\'s enum',
      },
      {
        at: 'policies["billing.charge"].revert.args.note',
        message: "is not a property the revert tool's input schema allows",
      },
    ]);
    const typed = await register({ tool: "billing.refund", args: { ...REFUND, amount: "ten" } });
    expect(typed.status).toBe(422);
    expect(typed.body.error?.message).toContain('is string; the revert tool\'s schema wants "number"');
    expect((await register({ tool: "billing.refund", args: [1] })).status).toBe(422);
  });

  it("takes a whole-value placeholder without judging its shape", async () => {
    const { status } = await register({ tool: "billing.release", args: "{{result}}" });
    expect(status).toBe(201);
  });
});
