/**
 * A script's `fetch` end to end: only with a toolset that enables http, each request a
 * journaled call sent by the dispatcher (with the call's idempotency key), a Response-like
 * object rebuilt for the script, and refusals as ToolError(refused) naming the rule. Loopback is
 * reached only through the worker's test option; other addresses only through an injected
 * resolver, with every non-loopback connect stopped by a guard.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  guardConnects,
  startLoopbackServer,
  tableResolver,
  type ConnectGuard,
  type LoopbackServer,
} from "../helpers/http-loopback.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let site: LoopbackServer;
let guard: ConnectGuard;
let toolset: string;
const seen: { method: string; url: string; key: string | undefined; body: string }[] = [];

beforeAll(async () => {
  guard = guardConnects();
  site = await startLoopbackServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        key: req.headers["idempotency-key"] as string | undefined,
        body,
      });
      if (req.url === "/moved") {
        res.writeHead(302, { location: "/hello" }).end();
        return;
      }
      res
        .writeHead(200, { "content-type": "application/json", "x-served-by": "loopback" })
        .end(JSON.stringify({ hello: "world", method: req.method, body }));
    });
  });
  const resolver = tableResolver({
    "api.test": ["127.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "mixed.test": ["127.0.0.1", "10.1.2.3"],
  });
  stack = await startRewindStack({ httpTool: { allowLoopbackForTests: true, resolve: resolver.resolve } });
  toolset = await registerToolset(stack, {
    http: { allowedHosts: [`api.test:${site.port}`, `metadata.test:${site.port}`, `mixed.test:${site.port}`] },
  });
});
afterAll(async () => {
  await stack?.stop();
  await site?.close();
  guard?.restore();
});

async function run(script: string, withToolset = true) {
  const id = await startRun(stack, { ...(withToolset ? { toolset } : {}), script });
  return { id, ...(await waitForRun(stack, id)) };
}

describe("the http tool", () => {
  it("fetches through the dispatcher and rebuilds a Response for the script", async () => {
    const done = await run(`export default async function main() {
  const got = await fetch("http://api.test:${site.port}/moved");
  const posted = await fetch("http://api.test:${site.port}/things", { method: "post", headers: { "content-type": "application/json" }, body: JSON.stringify({ a: 1 }) });
  return { status: got.status, ok: got.ok, url: got.url, redirected: got.redirected, servedBy: got.headers["x-served-by"], json: await got.json(), posted: await posted.json() };
}`);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({
      status: 200,
      ok: true,
      url: `http://api.test:${site.port}/hello`,
      redirected: true,
      servedBy: "loopback",
      json: { hello: "world", method: "GET", body: "" },
      posted: { hello: "world", method: "POST", body: '{"a":1}' },
    });
    expect(seen.filter((s) => s.key === `${done.id}/1`).map((s) => s.url)).toEqual(["/moved", "/hello"]);
    expect(seen.find((s) => s.key === `${done.id}/2`)?.method).toBe("POST");
    const journal = await stack.request("GET", `/v1/runs/${done.id}/journal`);
    expect((journal.body["entries"] as { tool: string }[]).map((e) => e.tool)).toEqual(["http.fetch", "http.fetch"]);
  });

  it("refuses hosts off the list and private addresses as ToolError(refused), before any connection", async () => {
    const before = seen.length;
    const done = await run(`import { ToolError } from "rewind:tools";
const attempt = async (url: string) => { try { await fetch(url); return "fetched"; } catch (e) { return e instanceof ToolError ? [e.code, (e.details as { rule: string }).rule] : String(e); } };
export default async () => [
  await attempt("http://elsewhere.test:${site.port}/"),
  await attempt("http://metadata.test:${site.port}/latest/meta-data"),
  await attempt("http://mixed.test:${site.port}/"),
  await attempt("ftp://api.test:${site.port}/"),
  await attempt("http://user:pw@api.test:${site.port}/"),
];`);
    expect(done.result).toEqual([
      ["refused", "notAllowed"],
      ["refused", "address:metadata"],
      ["refused", "address:private"],
      ["refused", "scheme"],
      ["refused", "userinfo"],
    ]);
    expect(seen.length).toBe(before);
    expect(guard.blocked).toEqual([]);
  });

  it("gives a script without an http toolset no fetch at all", async () => {
    const done = await run("export default async () => typeof (globalThis as { fetch?: unknown }).fetch;", false);
    expect(done.result).toBe("undefined");
  });
});
