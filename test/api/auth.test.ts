/**
 * API keys and namespaces: with keys configured, a request needs one, and a namespace never
 * sees another namespace's runs (they look exactly like missing ones).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const KEY_A = "key-for-tenant-a-0123456789";
const KEY_B = "key-for-tenant-b-0123456789";
let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${KEY_A}:tenant-a,${KEY_B}:tenant-b` } });
});
afterAll(async () => {
  await stack?.stop();
});

describe("API keys", () => {
  it("refuses requests without a valid key", async () => {
    expect((await stack.request("GET", "/v1/runs")).status).toBe(401);
    expect(
      (await stack.request("GET", "/v1/runs", undefined, { authorization: "Bearer wrong-key-0123456789" })).status,
    ).toBe(401);
    expect((await stack.request("GET", "/healthz")).status).toBe(200);
  });

  it("keeps each namespace's runs to itself", async () => {
    const started = await stack.request(
      "POST",
      "/v1/runs",
      { script: "export default async () => 1;" },
      { authorization: `Bearer ${KEY_A}` },
    );
    expect(started.status).toBe(201);
    const id = String(started.body.id);
    expect((await stack.request("GET", `/v1/runs/${id}`, undefined, { authorization: `Bearer ${KEY_A}` })).status).toBe(
      200,
    );
    expect((await stack.request("GET", `/v1/runs/${id}`, undefined, { authorization: `Bearer ${KEY_B}` })).status).toBe(
      404,
    );
    expect(
      (await stack.request("POST", `/v1/runs/${id}/cancel`, undefined, { authorization: `Bearer ${KEY_B}` })).status,
    ).toBe(404);
    // Wait until visibility lists the run for its own namespace, then look from the other one.
    await waitFor(
      `run ${id} to be listed in its own namespace`,
      async () =>
        ((await stack.request("GET", "/v1/runs", undefined, { authorization: `Bearer ${KEY_A}` })).body.runs ?? []).map(
          (r) => r.id,
        ),
      { timeoutMs: 10_000, intervalMs: 200, until: (ownList) => ownList.includes(id) },
    );
    const listed = await stack.request("GET", "/v1/runs", undefined, { authorization: `Bearer ${KEY_B}` });
    expect((listed.body.runs ?? []).map((r) => r.id)).not.toContain(id);
  });
});
