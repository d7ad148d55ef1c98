/**
 * Hostile scripts, run through the real API, Temporal and worker with small limits (64 MB heap,
 * 1 s of CPU per step): attempts to reach the host, to pollute prototypes that cross into it, to
 * allocate memory the heap limit does not see, huge and deeply nested values, runaway control
 * flow and floods of calls. Each must end in a clear run failure or a ToolError the script can
 * catch, never a terminated run or a lost call; afterwards the same worker still completes a
 * normal run, and the test process (which hosts the worker) has not grown without bound.
 */
import { randomUUID } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type RequestInfo, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool, slowTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";

const KEY = `hostile-${randomUUID()}`;
const auth = { authorization: `Bearer ${KEY}` };
const MB = 1024 * 1024;
const TOOLS = 'import { tools, sleep, ToolError } from "rewind:tools";\n';

let stack: RewindStack;
let server: TestMcpServer;
let receiver: EventReceiver;
let toolset: string;
const rawCalls: RequestInfo[] = [];
const slow = slowTool({ delayMs: 20, name: "slow" });
const started: string[] = [];
const rss: { before: number; after: number; peak: number } = { before: 0, after: 0, peak: 0 };
const heap = { before: 0, after: 0 };
// The test process hosts the worker; collect garbage before measuring it, as `--expose-gc` would.
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc") as () => void;
const hostPrototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
let peakTimer: NodeJS.Timeout | undefined;

beforeAll(async () => {
  [stack, server, receiver] = await Promise.all([
    startRewindStack({
      env: {
        REWIND_SANDBOX_MEMORY_MB: "64",
        REWIND_SANDBOX_CPU_MS: "1000",
        REWIND_API_KEYS: `${KEY}:hostile${randomUUID().slice(0, 8)}`,
      },
    }),
    startMcpServer({
      tools: [echoTool(), slow.tool],
      onRequest: (info) => {
        if (info.method === "tools/call") rawCalls.push(info);
      },
    }),
    startEventReceiver(),
  ]);
  const registered = await stack.request("POST", "/v1/toolsets", { mcpServers: { tools: { url: server.url } } }, auth);
  expect(registered.status).toBe(201);
  toolset = String(registered.body.id);
  const endpoint = await stack.request("PUT", "/v1/events/endpoint", { url: receiver.url }, auth);
  receiver.setSecret(String(endpoint.body["secret"]));
  // One normal run first, so that one-time costs (the type checker's libraries, the workflow
  // bundle) are not counted as growth caused by the hostile runs.
  await run(
    TOOLS + 'export default async function main() { return (await tools.echo({ message: "warm" })) !== null; }',
  );
  collectGarbage();
  rss.before = process.memoryUsage().rss;
  heap.before = process.memoryUsage().heapUsed;
  peakTimer = setInterval(() => {
    rss.peak = Math.max(rss.peak, process.memoryUsage().rss);
  }, 100);
});

afterAll(async () => {
  clearInterval(peakTimer);
  // Nothing hostile may outlive the file: end whatever is still running.
  await Promise.all(
    started.map((id) =>
      stack?.client.workflow
        .getHandle(id)
        .terminate("test over")
        .catch(() => undefined),
    ),
  );
  await stack?.stop();
  await server?.close();
  await receiver?.close();
});

/** How long the floods below may take to end: 1 000 timers and 150 calls, beside a loaded suite (one took over 30 s). */
const FLOOD_MS = 120_000;

/**
 * How long a run ended by its CPU limit may take: on a loaded machine its step can meet the
 * wall-time backstop first (MachineBusyError) and is taken again until it gets its CPU.
 */
const CPU_BOUND_MS = 120_000;

async function run(script: string, input?: unknown, timeoutMs = 30_000): Promise<ApiBody & { id: string }> {
  const answer = await stack.request("POST", "/v1/runs", { script, toolset, input }, auth);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  const id = String(answer.body.id);
  started.push(id);
  return { ...(await waitForRun(stack, id, timeoutMs, auth)), id };
}

function failedWith(body: ApiBody, type: string, message: RegExp): void {
  expect(body.status, JSON.stringify(body).slice(0, 500)).toBe("failed");
  expect(body.error?.type).toBe(type);
  expect(body.error?.message).toMatch(message);
}

describe("escape attempts see only the isolate's own realm", () => {
  it("finds no process, require, host global, host functions or module loader", async () => {
    const done = await run(`export default async function main() {
      const g = globalThis as any;
      const out: Record<string, unknown> = {};
      for (const name of ["process", "require", "module", "Buffer", "setTimeout", "fetch", "__rewindHost", "__rewindInternal"]) out[name] = typeof g[name];
      const o = { f(this: any) { return this.constructor.constructor("return this")(); } };
      out.ctorThis = typeof o.f().process;
      try { out.fnProcess = typeof Function("return process")(); } catch (e) { out.fnProcess = (e as Error).name; }
      try { await (Function("return import('node:fs')")() as Promise<unknown>); out.dynamicImport = "loaded"; } catch (e) { out.dynamicImport = String(e); }
      try { await import("node:child_process" as string); out.directImport = "loaded"; } catch (e) { out.directImport = String(e); }
      const E = Error as any;
      E.prepareStackTrace = (_e: unknown, sites: any[]) => sites;
      const sites = new Error("probe").stack as any;
      E.prepareStackTrace = undefined;
      out.callSites = (sites as any[]).map((s) => [typeof s.getThis(), typeof s.getFunction()]);
      out.globals = Object.getOwnPropertyNames(globalThis).filter((k) => /rewind|host|ivm|process|require|module|buffer|wasm|webassembly/i.test(k) && k !== "ArrayBuffer");
      g.hostileMarker = "set by a script";
      return out;
    }`);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({
      process: "undefined",
      require: "undefined",
      module: "undefined",
      Buffer: "undefined",
      setTimeout: "undefined",
      fetch: "undefined",
      __rewindHost: "undefined",
      __rewindInternal: "undefined",
      ctorThis: "undefined",
      fnProcess: "ReferenceError",
      dynamicImport: expect.stringMatching(/Error/),
      directImport: expect.stringMatching(/Error/),
      callSites: [["undefined", "undefined"]],
      globals: [],
    });
    expect((globalThis as Record<string, unknown>)["hostileMarker"]).toBeUndefined();
  });

  it("gets no memory outside the heap limit: no WebAssembly, SharedArrayBuffer or resizable ArrayBuffer", async () => {
    const done = await run(`export default async function main() {
      const g = globalThis as any;
      const out: unknown[] = [typeof g.WebAssembly, typeof g.SharedArrayBuffer];
      const attempts = [
        () => new (ArrayBuffer as any)(0, { maxByteLength: 1024 * 1024 * 1024 }),
        () => new ((new Uint8Array(1).buffer as any).constructor)(256 * 1024 * 1024, { maxByteLength: 256 * 1024 * 1024 }),
        () => { class Big extends (ArrayBuffer as any) { constructor() { super(0, { maxByteLength: 1 << 30 }); } } return new Big(); },
      ];
      for (const attempt of attempts) { try { attempt(); out.push("allocated"); } catch (e) { out.push((e as Error).name); } }
      out.push(new ArrayBuffer(16).slice(4).byteLength, new Uint8Array(4).buffer instanceof ArrayBuffer);
      return out;
    }`);
    expect(done.result).toEqual(["undefined", "undefined", "TypeError", "TypeError", "TypeError", 12, true]);
    // Ordinary buffers count against the 64 MB heap limit.
    const hoard = await run(
      "export default async function main() { const b: ArrayBuffer[] = []; for (let i = 0; i < 64; i++) b.push(new ArrayBuffer(256 * 1024 * 1024)); return b.length; }",
    );
    failedWith(hoard, "ScriptFailed", /Array buffer allocation failed/);
  });
});

describe("prototype pollution stays in the isolate", () => {
  it("sends tool arguments with __proto__ and constructor.prototype keys as plain JSON", async () => {
    rawCalls.length = 0;
    const done = await run(
      TOOLS +
        `export default async function main() {
      const args = JSON.parse('{"message":"p","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}');
      const echoed: any = await tools.echo(args);
      return { sentKeys: Object.keys(args), echoedPolluted: echoed.args.polluted ?? null };
    }`,
    );
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ sentKeys: ["message", "__proto__", "constructor"], echoedPolluted: null });
    const params = (rawCalls[0]?.body as { params: { arguments: Record<string, unknown> } }).params;
    // The request on the wire: plain JSON whose keys are data, never a prototype.
    expect(Object.getPrototypeOf(params.arguments)).toBe(Object.prototype);
    expect(params.arguments["constructor"]).toEqual({ prototype: { polluted: "yes" } });
    expect(Object.keys(params.arguments).filter((k) => k !== "__proto__")).toEqual(["message", "constructor"]);
    const recorded = server.calls.at(-1)?.arguments ?? {};
    expect(Object.prototype.hasOwnProperty.call(recorded, "polluted")).toBe(false);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(hostPrototypeKeys);
  });

  it("keeps a result whose prototype the script mutates, and the isolate's Object.prototype, away from the host", async () => {
    const done = await run(
      TOOLS +
        `export default async function main() {
      const r: any = await tools.echo({ message: "m" });
      r.__proto__.polluted = "from the script";
      (Object.prototype as any).polluted2 = "on the isolate's Object.prototype";
      Object.setPrototypeOf(r, { inherited: 1, toJSON() { return { replaced: true }; } });
      const again: any = await tools.echo({ message: "again", r } as any);
      return { r, sent: again.args.r, seenInIsolate: ({} as any).polluted };
    }`,
    );
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ r: { replaced: true }, sent: { replaced: true }, seenInIsolate: "from the script" });
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(({} as Record<string, unknown>)["polluted2"]).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(hostPrototypeKeys);
  });

  it("survives a script that breaks its own runtime (toJSON on Object.prototype, patched Map and JSON)", async () => {
    const nullJson = await run(
      TOOLS +
        `export default async function main() {
      (Object.prototype as any).toJSON = () => null;
      try { await tools.echo({ message: "x" }); return "sent"; } catch (e) { return "caught " + (e as Error).name; }
    }`,
    );
    expect(nullJson.result).toBe("caught TypeError");
    const tampered = await run(
      TOOLS +
        `export default async function main() {
      (Map.prototype as any).get = () => undefined;
      (JSON as any).parse = () => { throw new Error("tampered"); };
      await sleep(1);
      return "unreachable";
    }`,
    );
    failedWith(tampered, "ScriptStuck", /waiting for a promise that nothing will settle/);
  });
});

describe("huge values end in a clear failure or a ToolError, never a terminated run", () => {
  it("fails a run returning a 50 MB or a 17 MB string with run.failed; 2.1 MB is kept outside history and returned whole", async () => {
    const [huge, big, fits] = await Promise.all([
      run('export default async function main() { return "x".repeat(50 * 1024 * 1024); }'),
      run('export default async function main() { return "x".repeat(17 * 1024 * 1024); }'),
      run('export default async function main() { return "x".repeat(2_100_000); }'),
    ]);
    // Building and measuring 50 MB can run into the step's CPU or memory limit first on a loaded
    // machine: a clear failure too, naming the limit.
    if (huge.error?.type === "LimitExceeded") failedWith(huge, "LimitExceeded", /CPU|memory/i);
    else failedWith(huge, "ScriptFailed", /result is \d+ bytes of JSON, more than/);
    failedWith(big, "ScriptFailed", /result is 17825794 bytes of JSON, more than the 16777216 a run's result may be/);
    // A run Temporal terminated would never announce its end; these do.
    expect((await receiver.waitFor(big.id, "run.failed", 15_000)).data).toMatchObject({
      error: { type: "ScriptFailed" },
    });
    // Over Temporal's 2 MiB payload limit, and still a result: it lives in the payload store.
    expect(fits.status, JSON.stringify(fits.error)).toBe("completed");
    expect(String(fits.result).length).toBe(2_100_000);
  });

  it("refuses oversized arguments with invalidArguments, keeps them out of the journal, and budgets a step's calls", async () => {
    const done = await run(
      TOOLS +
        `export default async function main() {
      const codes: unknown[] = [];
      try { await tools.echo({ message: "z".repeat(5_000_000) }); codes.push("sent"); } catch (e) { codes.push(e instanceof ToolError ? e.code : String(e)); }
      const m = "y".repeat(400_000);
      const three = await Promise.allSettled([tools.echo({ message: m }), tools.echo({ message: m }), tools.echo({ message: m })]);
      codes.push(three.map((o) => (o.status === "fulfilled" ? "ok" : (o.reason as ToolError).code)));
      return codes;
    }`,
    );
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual(["invalidArguments", ["ok", "ok", "invalidArguments"]]);
    const journal = await stack.request("GET", `/v1/runs/${done.id}/journal`, undefined, auth);
    const entries = journal.body["entries"] as {
      seq: number;
      args: unknown;
      status: string;
      error?: { code: string };
    }[];
    expect(entries[0]).toMatchObject({ seq: 1, args: null, status: "failed", error: { code: "invalidArguments" } });
    expect(entries[3]).toMatchObject({ seq: 4, args: null, status: "failed", error: { code: "invalidArguments" } });
  });
});

describe("deep structures", () => {
  const nest = (depth: number) => `let a: unknown[] = []; for (let i = 0; i < ${depth}; i++) a = [a];`;
  const send = (depth: number) =>
    TOOLS +
    `export default async function main() { ${nest(depth)}
    try { const r: any = await tools.echo({ message: "deep", a } as any); return typeof r; } catch (e) { return e instanceof ToolError ? [e.code, e.seq] : String(e); } }`;

  it("refuses 100 000-deep and 5 000-deep arguments with invalidArguments and sends 500-deep ones", async () => {
    const [deepest, deep, fine] = await Promise.all([
      run(send(100_000), undefined, CPU_BOUND_MS),
      run(send(5_000)),
      run(send(500)),
    ]);
    // V8 spends ~0.7 s of CPU before its JSON.stringify gives up at 100 000 levels, so a slow
    // machine may end this step by the 1 s CPU limit instead; both are clean outcomes.
    if (deepest.status === "completed") expect(deepest.result).toEqual(["invalidArguments", 0]);
    else failedWith(deepest, "LimitExceeded", /CPU time limit of 1000 ms/);
    expect(deep.result).toEqual(["invalidArguments", 1]);
    expect(fine.result).toBe("object");
  }, 300_000);

  it("fails runs returning 100 000-deep and 5 000-deep results with a message saying why", async () => {
    const [deepest, deep] = await Promise.all([
      run(`export default async function main() { ${nest(100_000)} return a; }`, undefined, CPU_BOUND_MS),
      run(`export default async function main() { ${nest(5_000)} return a; }`),
    ]);
    if (deepest.error?.type === "LimitExceeded") failedWith(deepest, "LimitExceeded", /CPU time limit of 1000 ms/);
    else failedWith(deepest, "ScriptFailed", /result is not JSON: Maximum call stack size exceeded/);
    failedWith(deep, "ScriptFailed", /result nests deeper than 512 levels/);
  }, 300_000);
});

describe("runaway control flow", () => {
  it("fails recursion, loops in .then, catastrophic regexes, looping getters and allocation bombs by their limits", async () => {
    // Two at a time: enough to overlap, not so many that six 64 MB heaps peak together.
    const [recursion, thenLoop] = await Promise.all([
      run("export default async function main() { const f = (n: number): number => f(n + 1) + 1; return f(0); }"),
      run(
        "export default async function main() { await Promise.resolve().then(() => { while (true) {} }); }",
        undefined,
        CPU_BOUND_MS,
      ),
    ]);
    const [regex, getter] = await Promise.all([
      run(
        'export default async function main() { return /(a+)+$/.test("a".repeat(40) + "b"); }',
        undefined,
        CPU_BOUND_MS,
      ),
      run(
        TOOLS + "export default async function main() { await tools.echo({ get message(): string { for (;;) {} } }); }",
        undefined,
        CPU_BOUND_MS,
      ),
    ]);
    const [strings, hoard] = await Promise.all([
      run('export default async function main() { let s = "x"; for (;;) s += s; }'),
      run(
        'export default async function main() { const h: string[][] = []; for (;;) h.push(new Array(1_000_000).fill("x")); }',
      ),
    ]);
    failedWith(recursion, "ScriptFailed", /Maximum call stack size exceeded/);
    failedWith(thenLoop, "LimitExceeded", /CPU time limit of 1000 ms/);
    failedWith(regex, "LimitExceeded", /CPU time limit of 1000 ms/);
    failedWith(getter, "LimitExceeded", /CPU time limit of 1000 ms/);
    failedWith(strings, "ScriptFailed", /Invalid string length/);
    failedWith(hoard, "LimitExceeded", /memory limit of 64 MB/);
  }, 300_000);

  it("fails a script waiting for a promise nothing will settle", async () => {
    failedWith(
      await run("export default async function main() { await new Promise(() => {}); }"),
      "ScriptStuck",
      /waiting for a promise that nothing will settle/,
    );
  });
});

describe("floods of calls", () => {
  it("fails 20 000 sleeps and 5 000 tool calls issued at once with the calls-per-step limit, within seconds", async () => {
    const t0 = Date.now();
    const [sleeps, calls] = await Promise.all([
      run(
        TOOLS +
          "export default async function main() { const p: Promise<void>[] = []; for (let i = 0; i < 20_000; i++) p.push(sleep(1)); await Promise.all(p); return p.length; }",
      ),
      run(
        TOOLS +
          'export default async function main() { const p: Promise<unknown>[] = []; for (let i = 0; i < 5_000; i++) p.push(tools.echo({ message: "m" })); return (await Promise.all(p)).length; }',
      ),
    ]);
    failedWith(sleeps, "LimitExceeded", /more than 1000 calls in one step/);
    failedWith(calls, "LimitExceeded", /more than 1000 calls in one step/);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it(
    "completes 500 sleeps and 150 slow tool calls at once, never more than 16 calls in flight",
    async () => {
      // 500, not 1 000: the step that issues them all runs under this stack's 1 s CPU limit, and
      // on a loaded two-core machine 1 000 of them cost that step more than its second.
      const [sleeps, calls] = await Promise.all([
        run(
          TOOLS +
            "export default async function main() { const p: Promise<void>[] = []; for (let i = 0; i < 500; i++) p.push(sleep(1)); await Promise.all(p); return p.length; }",
          undefined,
          FLOOD_MS,
        ),
        run(
          TOOLS +
            "export default async function main() { const p: Promise<unknown>[] = []; for (let i = 0; i < 150; i++) p.push(tools.slow({})); return (await Promise.all(p)).length; }",
          undefined,
          FLOOD_MS,
        ),
      ]);
      expect(sleeps.status, `the sleeps' run: ${JSON.stringify(sleeps.error)}`).toBe("completed");
      expect(calls.status, `the calls' run: ${JSON.stringify(calls.error)}`).toBe("completed");
      expect([sleeps.result, calls.result]).toEqual([500, 150]);
      expect(slow.state.completed).toBe(150);
      expect(slow.state.maxInFlight).toBeLessThanOrEqual(16);
    },
    FLOOD_MS + 30_000,
  );
});

describe("after all of it", () => {
  const heaviest = [
    'export default async function main() { return "x".repeat(50 * 1024 * 1024); }',
    'export default async function main() { const h: string[][] = []; for (;;) h.push(new Array(1_000_000).fill("x")); }',
    "export default async function main() { const b: ArrayBuffer[] = []; for (let i = 0; i < 64; i++) b.push(new ArrayBuffer(256 * 1024 * 1024)); return b.length; }",
    TOOLS +
      'export default async function main() { try { await tools.echo({ message: "z".repeat(5_000_000) }); } catch { return "refused"; } }',
  ];

  it("the same worker completes a normal run, and the test process has not grown without bound", async () => {
    const done = await run(
      TOOLS +
        'export default async function main(input: { n: number }) { const r: any = await tools.echo({ message: "ok" }); return [input.n * 2, r.args.message]; }',
      { n: 21 },
    );
    expect(done.result).toEqual([42, "ok"]);
    collectGarbage();
    rss.after = process.memoryUsage().rss;
    heap.after = process.memoryUsage().heapUsed;
    // The heaviest runs once more: memory a run leaked would add up; memory the allocator keeps
    // for reuse (RSS does not shrink after a 50 MB string or a 64 MB heap) would not.
    for (const script of heaviest) expect((await run(script)).status).toMatch(/^(failed|completed)$/);
    collectGarbage();
    const again = process.memoryUsage().rss;
    rss.peak = Math.max(rss.peak, rss.after, again);
    const mb = (n: number) => `${Math.round(n / MB)} MB`;
    console.info(
      `hostile runs: ${started.length}; rss before ${mb(rss.before)}, after ${mb(rss.after)}, after the heaviest again ${mb(again)}, peak ${mb(rss.peak)}; ` +
        `heap used before ${mb(heap.before)}, after ${mb(heap.after)} (all after gc)`,
    );
    expect(heap.after - heap.before).toBeLessThan(100 * MB);
    expect(rss.after - rss.before).toBeLessThan(400 * MB);
    expect(again - rss.after).toBeLessThan(100 * MB);
  });
});
