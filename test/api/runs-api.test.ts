/**
 * The runs API's contract: status codes, error shapes, type errors with positions, listing,
 * cancellation, idempotent starts and namespace isolation. Bad input must get a clear 4xx.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe("POST /v1/runs", () => {
  it("answers 201 with the run's id, status and Temporal link", async () => {
    const { status, body } = await stack.request("POST", "/v1/runs", { script: "export default async () => 1;" });
    expect(status).toBe(201);
    expect(body.id).toMatch(/^run_/);
    // A new run's view is written without asking Temporal: it must agree with what a read says.
    expect(body.status).toBe("running");
    expect(String(body.toolset)).toMatch(/^ts_[0-9a-f]{64}$/);
    const read = await stack.request("GET", `/v1/runs/${String(body.id)}`);
    expect(read.body.toolset).toBe(body.toolset);
    expect(read.body.temporalUrl).toBe(body.temporalUrl);
    expect(Math.abs(Date.parse(String(read.body.startedAt)) - Date.parse(String(body.startedAt)))).toBeLessThan(2_000);
  });

  it("refuses a script that does not type-check with 422, line and column", async () => {
    const script =
      "export default async function main(input: { n: number }) {\n  const s: string = input.n;\n  return s;\n}";
    const { status, body } = await stack.request("POST", "/v1/runs", { script });
    expect(status).toBe(422);
    expect(body.error?.code).toBe("typeCheckFailed");
    expect(body.error?.details).toEqual([
      expect.objectContaining({ line: 2, column: 9, message: "Type 'number' is not assignable to type 'string'." }),
    ]);
  });

  it("refuses a script without a default export, and one that imports a Node module", async () => {
    const noDefault = await stack.request("POST", "/v1/runs", { script: "export const x = 1;" });
    expect(noDefault.status).toBe(422);
    expect(JSON.stringify(noDefault.body.error?.details)).toContain("default export");
    const importsFs = await stack.request("POST", "/v1/runs", {
      script: 'import fs from "node:fs";\nexport default async () => fs;',
    });
    expect(importsFs.status).toBe(422);
    expect(importsFs.body.error?.details).toEqual([expect.objectContaining({ line: 1, column: 16 })]);
  });

  it("refuses syntax the sandbox would need to transform (enum) with its position", async () => {
    const { status, body } = await stack.request("POST", "/v1/runs", {
      script: "enum Color { Red }\nexport default async () => Color.Red;",
    });
    expect(status).toBe(422);
    expect(body.error?.details).toEqual([expect.objectContaining({ line: 1, column: 6 })]);
  });

  it("answers 400 for bad bodies, naming the problem", async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /script/],
      [{ script: "" }, /script/],
      [{ script: 42 }, /script/],
      [{ script: "export default async () => 1;", extra: true }, /extra/],
      [{ script: "export default async () => 1;", toolset: "nope" }, /toolset/],
      [[1, 2], /expected object/],
    ];
    for (const [body, message] of cases) {
      const response = await stack.request("POST", "/v1/runs", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error?.code).toBe("badRequest");
      expect(response.body.error?.message).toMatch(message);
    }
  });

  it("answers 400 for malformed JSON and for a body that is not JSON", async () => {
    const malformed = await fetch(`${stack.api.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"script": ',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("invalidJson");
    const text = await fetch(`${stack.api.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "export default 1",
    });
    expect(text.status).toBe(400);
    expect(((await text.json()) as { error: { message: string } }).error.message).toMatch(/JSON body/);
  });

  it("answers 413 for a body over the limit", async () => {
    const response = await stack.request("POST", "/v1/runs", { script: "x".repeat(18 * 1024 * 1024) });
    expect(response.status).toBe(413);
    expect(response.body.error?.code).toBe("payloadTooLarge");
  });

  it("answers 404 for an unknown toolset", async () => {
    const response = await stack.request("POST", "/v1/runs", {
      script: "export default async () => 1;",
      toolset: `ts_${"0".repeat(64)}`,
    });
    expect(response.status).toBe(404);
  });

  it("starts one run for repeated requests with the same Idempotency-Key", async () => {
    const key = `key-${Date.now()}`;
    const first = await stack.request(
      "POST",
      "/v1/runs",
      { script: "export default async () => 7;" },
      { "Idempotency-Key": key },
    );
    const second = await stack.request(
      "POST",
      "/v1/runs",
      { script: "export default async () => 7;" },
      { "Idempotency-Key": key },
    );
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
  });
});

describe("reading, listing and cancelling runs", () => {
  it("answers 404 for an unknown run and for a malformed id", async () => {
    expect((await stack.request("GET", "/v1/runs/run_01ABCDEFGHJKMNPQRSTVWXYZ00")).status).toBe(404);
    expect((await stack.request("GET", "/v1/runs/not-a-run")).status).toBe(404);
    expect((await stack.request("POST", "/v1/runs/run_01ABCDEFGHJKMNPQRSTVWXYZ00/cancel")).status).toBe(404);
  });

  it("cancels a sleeping run", async () => {
    const started = await stack.request("POST", "/v1/runs", {
      script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1 hour"); return 1; };',
    });
    const cancelled = await stack.request("POST", `/v1/runs/${started.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    const done = await waitForRun(stack, String(started.body.id));
    expect(done.status).toBe("cancelled");
  });

  it("lists a namespace's runs newest first, in pages", async () => {
    // A namespace of its own, and runs that stay running, so nothing else moves the order.
    const key = `list-key-${randomUUID()}`;
    const own = await startRewindStack({
      noWorker: true,
      env: {
        REWIND_API_KEYS: `${key}:list-${randomUUID().slice(0, 8)}`,
        REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
      },
    });
    const auth = { authorization: `Bearer ${key}` };
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const started = await own.request(
          "POST",
          "/v1/runs",
          { script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1 hour"); };' },
          auth,
        );
        ids.push(String(started.body.id));
      }
      const listed = await waitFor(
        "the three runs to be listed",
        async () => ((await own.request("GET", "/v1/runs", undefined, auth)).body.runs ?? []).map((r) => r.id),
        { timeoutMs: 10_000, intervalMs: 200, until: (listed) => listed.length >= 3 },
      );
      expect(listed).toEqual([ids[2], ids[1], ids[0]]);
      const first = await own.request("GET", "/v1/runs?pageSize=2", undefined, auth);
      expect(first.body.runs?.map((r) => r.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.nextPageToken).toBeTruthy();
      const second = await own.request(
        "GET",
        `/v1/runs?pageSize=2&pageToken=${first.body.nextPageToken}`,
        undefined,
        auth,
      );
      expect(second.body.runs?.map((r) => r.id)).toEqual([ids[0]]);
      expect((await own.request("GET", "/v1/runs?pageSize=0", undefined, auth)).status).toBe(400);
      for (const id of ids) await own.request("POST", `/v1/runs/${id}/cancel`, undefined, auth);
    } finally {
      await own.stop();
    }
  });
});
