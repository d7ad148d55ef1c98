/**
 * A small billing service for the test MCP server, whose effects can be undone: `charge` books a
 * charge (once per idempotency key) and answers its id, `refund` refunds one (once per key, and
 * never a charge twice), `hold` books a hold `release` lifts. Every effect is kept in order with
 * the key it was sent with, so tests assert what happened, in which order, and that reverts
 * undid what the run did.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TestToolDefinition } from "./mcp-test-server.ts";
import { IDEMPOTENCY_KEY } from "./mcp-test-tools.ts";

export interface BillingEffect {
  tool: string;
  key: string | undefined;
  args: Record<string, unknown>;
}

export interface BillingState {
  /** Charges by id, with the amount not yet refunded. */
  charges: Map<string, { amount: number; refunded: boolean }>;
  /** Every effect performed, in order (a repeated key performs nothing). */
  effects: BillingEffect[];
  /** Calls of each tool, repetitions included. */
  calls: Map<string, number>;
}

const answer = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});
const failure = (message: string): CallToolResult => ({ content: [{ type: "text", text: message }], isError: true });

export function billingTools(): { tools: TestToolDefinition[]; state: BillingState } {
  const state: BillingState = { charges: new Map(), effects: [], calls: new Map() };
  const answered = new Map<string, CallToolResult>();
  /** Performs `effect` once per key: a repeated key gets the first answer again. */
  const once = (tool: string, effect: (args: Record<string, unknown>) => CallToolResult) => {
    return async (args: Record<string, unknown>, { meta }: { meta: Record<string, unknown> }) => {
      state.calls.set(tool, (state.calls.get(tool) ?? 0) + 1);
      const key = typeof meta[IDEMPOTENCY_KEY] === "string" ? meta[IDEMPOTENCY_KEY] : undefined;
      const seen = key === undefined ? undefined : answered.get(`${tool}#${key}`);
      if (seen) return seen;
      const result = effect(args);
      if (!result.isError) state.effects.push({ tool, key, args });
      if (key !== undefined) answered.set(`${tool}#${key}`, result);
      return result;
    };
  };
  const tools: TestToolDefinition[] = [
    {
      name: "charge",
      description: "Charge a customer.",
      inputSchema: {
        type: "object",
        properties: { customer: { type: "string" }, amount: { type: "number" } },
        required: ["customer", "amount"],
      },
      handler: once("charge", (args) => {
        const id = `ch_${state.charges.size + 1}`;
        state.charges.set(id, { amount: Number(args["amount"]), refunded: false });
        return answer({ id, amount: args["amount"], customer: args["customer"] });
      }),
    },
    {
      name: "refund",
      description: "Refund a charge.",
      inputSchema: {
        type: "object",
        properties: {
          chargeId: { type: "string" },
          amount: { type: "number" },
          reason: { type: "string", enum: ["rollback", "customer"] },
        },
        required: ["chargeId", "amount"],
        additionalProperties: false,
      },
      handler: once("refund", (args) => {
        const charge = state.charges.get(String(args["chargeId"]));
        if (!charge) return failure(`no charge ${String(args["chargeId"])}`);
        if (charge.refunded) return failure(`charge ${String(args["chargeId"])} was refunded already`);
        charge.refunded = true;
        return answer({ refunded: args["chargeId"], amount: args["amount"] });
      }),
    },
    {
      name: "hold",
      description: "Put a hold on an account.",
      inputSchema: { type: "object", properties: { account: { type: "string" } }, required: ["account"] },
      handler: once("hold", (args) => answer({ holdId: `hold_${String(args["account"])}` })),
    },
    {
      name: "release",
      description: "Release a hold.",
      inputSchema: { type: "object", properties: { holdId: { type: "string" } }, required: ["holdId"] },
      handler: once("release", (args) => answer({ released: args["holdId"] })),
    },
  ];
  return { tools, state };
}

/** Whether every charge the service booked has been refunded. */
export function allRefunded(state: BillingState): boolean {
  return [...state.charges.values()].every((charge) => charge.refunded);
}
