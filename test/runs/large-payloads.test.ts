/**
 * Large results under Temporal's stock limits (2 MiB payloads, 4 MiB requests): results over the
 * threshold are kept in the payload store and history holds references, so runs with many large
 * results complete with every byte intact, the journal of such a run answers, and a result over
 * Rewind's own limit fails its call once instead of stalling or terminating the run.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isReferencePayload } from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  guardConnects,
  startLoopbackServer,
  tableResolver,
  type ConnectGuard,
  type LoopbackServer,
} from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { journalPages } from "../../src/api/worker-query.ts";
import { replayCassette } from "../../src/sdk/replay.ts";
import type { Cassette } from "../../src/shared/run.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
let site: LoopbackServer;
let guard: ConnectGuard;
let httpToolset: string;
/** 4.9 MB of bytes that are not text (every byte value, shuffled by a hash). */
const BINARY = Buffer.concat(
  Array.from({ length: Math.ceil(4_900_000 / 32) }, (_, i) => createHash("sha256").update(String(i)).digest()),
).subarray(0, 4_900_000);

/** Deterministic text of `bytes` bytes for a given seed, and its SHA-256. */
function blob(bytes: number, seed: string): string {
  const unit = createHash("sha256").update(seed).digest("hex");
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

beforeAll(async () => {
  guard = guardConnects();
  site = await startLoopbackServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(BINARY);
  });
  stack = await startRewindStack({
    httpTool: { allowLoopbackForTests: true, resolve: tableResolver({ "files.test": ["127.0.0.1"] }).resolve },
  });
  server = await startMcpServer({
    tools: [
      {
        name: "big",
        inputSchema: {
          type: "object",
          properties: { bytes: { type: "number" }, seed: { type: "string" } },
          required: ["bytes", "seed"],
        },
        handler: async (args) => ({
          content: [{ type: "text", text: blob(Number(args["bytes"]), String(args["seed"])) }],
        }),
      },
    ],
  });
  toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
  httpToolset = await registerToolset(stack, { http: { allowedHosts: [`files.test:${site.port}`] } });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await site?.close();
  guard?.restore();
});

/** A script that fetches `count` results of `bytes` each and answers their lengths and hashes. */
const fetchAll = (count: number, bytes: number, parallel = false) => `import { svc } from "rewind:tools";
async function sha(text: string): Promise<string> { return String(text.length); }
export default async function main() {
  const seeds = Array.from({ length: ${count} }, (_, i) => "seed-" + i);
  const texts: string[] = ${
    parallel
      ? `(await Promise.all(seeds.map((seed) => svc.big({ bytes: ${bytes}, seed })))) as unknown as string[]`
      : `[]; for (const seed of seeds) texts.push((await svc.big({ bytes: ${bytes}, seed })) as unknown as string)`
  };
  return { lengths: await Promise.all(texts.map(sha)), heads: texts.map((t) => t.slice(0, 64)), tails: texts.map((t) => t.slice(-64)) };
}`;

async function expectAll(id: string, count: number, bytes: number): Promise<void> {
  const done = await waitForRun(stack, id, 180_000);
  expect(done.status, JSON.stringify(done.error)).toBe("completed");
  const result = done.result as { lengths: string[]; heads: string[]; tails: string[] };
  expect(result.lengths).toEqual(Array.from({ length: count }, () => String(bytes)));
  for (let i = 0; i < count; i++) {
    const expected = blob(bytes, `seed-${i}`);
    expect(result.heads[i]).toBe(expected.slice(0, 64));
    expect(result.tails[i]).toBe(expected.slice(-64));
  }
}

describe("large results under stock limits", () => {
  it("completes 4 sequential calls of 1.5 MB each, keeping the results out of history", async () => {
    const id = await startRun(stack, { toolset, script: fetchAll(4, 1_500_000) });
    await expectAll(id, 4, 1_500_000);
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const results = (history.events ?? []).flatMap(
      (e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? [],
    );
    expect(results).toHaveLength(4);
    for (const payload of results) expect(isReferencePayload(payload)).toBe(true);
    // Every byte of history is well under the stock 2 MiB payload limit.
    const largest = Math.max(...(history.events ?? []).map((e) => JSON.stringify(e).length));
    expect(largest).toBeLessThan(64 * 1024);
    const stored = await readdir(
      path.join(stack.config.payloads.store.kind === "file" ? stack.config.payloads.store.dir : "", ""),
    );
    expect(stored.length).toBeGreaterThan(0);
  }, 240_000);

  it("completes 20 results of 1 MB, 16 of them at once; its journal pages by bytes and its cassette replays", async () => {
    const id = await startRun(stack, { toolset, script: fetchAll(20, 1_000_000, true) });
    await expectAll(id, 20, 1_000_000);
    // Pages of at most ~4 MiB (the default), each with at least one entry, until every entry was seen.
    const seen: number[] = [];
    let afterSeq = 0;
    for (let page = 0; page < 40; page++) {
      const { status, body } = await stack.request("GET", `/v1/runs/${id}/journal?afterSeq=${afterSeq}`);
      expect(status).toBe(200);
      const entries = body["entries"] as { seq: number }[];
      expect(entries.length).toBeGreaterThan(0);
      expect(JSON.stringify(entries).length).toBeLessThan(4 * 1024 * 1024 + 1_100_000);
      seen.push(...entries.map((e) => e.seq));
      if (body["nextAfterSeq"] === undefined) break;
      afterSeq = Number(body["nextAfterSeq"]);
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // A whole-journal read (the cassette's, a fork's) asks for bounded pages: one or two 1 MB entries each.
    const pageSizes: number[] = [];
    for await (const page of journalPages(stack.client, id, { withBatches: true })) pageSizes.push(page.entries.length);
    expect(pageSizes.length).toBeGreaterThanOrEqual(10);
    expect(pageSizes.reduce((sum, n) => sum + n, 0)).toBe(20);
    const cassette = await stack.request("GET", `/v1/runs/${id}/cassette`);
    expect(cassette.status).toBe(200);
    expect((cassette.body as unknown as Cassette).entries.map((e) => e.seq)).toEqual(seen);
    const replayed = await replayCassette({ cassette: cassette.body as unknown as Cassette });
    expect(replayed.ok, JSON.stringify(replayed).slice(0, 300)).toBe(true);
  }, 240_000);

  it("completes one 6 MB result, and the run's journal answers", async () => {
    const id = await startRun(stack, { toolset, script: fetchAll(1, 6_000_000) });
    await expectAll(id, 1, 6_000_000);
    const journal = await stack.request("GET", `/v1/runs/${id}/journal?limit=1`);
    expect(journal.status, JSON.stringify(journal.body).slice(0, 300)).toBe(200);
    const entries = journal.body["entries"] as { result?: string }[];
    expect(sha256(String(entries[0]?.result))).toBe(sha256(blob(6_000_000, "seed-0")));
  }, 240_000);

  it("completes a 100-call run of 1 MB results", async () => {
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async function main() {
  let total = 0;
  const tails: string[] = [];
  for (let i = 0; i < 100; i++) {
    const text = (await svc.big({ bytes: 1_000_000, seed: "many-" + i })) as unknown as string;
    total += text.length;
    tails.push(text.slice(-8));
  }
  return { total, tails };
}`,
    });
    const done = await waitForRun(stack, id, 240_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({
      total: 100_000_000,
      tails: Array.from({ length: 100 }, (_, i) => blob(1_000_000, `many-${i}`).slice(-8)),
    });
  }, 300_000);

  it("fetches a 4.9 MB binary body once, every byte intact", async () => {
    const id = await startRun(stack, {
      toolset: httpToolset,
      script: `export default async (input: { url: string }) => {
  const response = await fetch(input.url);
  return { status: response.status, encoding: response.bodyEncoding, body: await response.text() };
};`,
      input: { url: `http://files.test:${site.port}/blob.bin` },
    } as never);
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as { status: number; encoding: string; body: string };
    expect(result).toMatchObject({ status: 200, encoding: "base64" });
    expect(sha256(result.body)).toBe(sha256(BINARY.toString("base64")));
    expect(Buffer.from(result.body, "base64").equals(BINARY)).toBe(true);
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    // Sent once: a single attempt completed.
    expect(
      (history.events ?? [])
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => e.activityTaskStartedEventAttributes?.attempt),
    ).toEqual([1]);
    expect(guard.blocked).toEqual([]);
  }, 180_000);

  it("takes a 5 MB run input and returns a 5 MB result", async () => {
    const input = { text: blob(5_000_000, "input") };
    const id = await startRun(stack, {
      script: "export default async (input: { text: string }) => ({ echoed: input.text, length: input.text.length });",
      input,
    } as never);
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as { echoed: string; length: number };
    expect(result.length).toBe(5_000_000);
    expect(sha256(result.echoed)).toBe(sha256(input.text));
  }, 180_000);
});
