/**
 * The console without API keys, as `npm start` serves it: loopback callers are served as
 * `default/loopback`, as the API serves them, and each browser gets a session on its first page
 * all the same, so a form carries a token a page of another site cannot know: a post without it,
 * or from another origin, decides nothing. A request naming a host other than a loopback name
 * (another site's name made to resolve to 127.0.0.1) is refused before anything is read.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi } from "../../src/cli/start-api.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack();
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

interface Visit {
  status: number;
  text: string;
  cookie: string;
  setCookie: string;
}

async function visit(path: string, init: RequestInit = {}): Promise<Visit> {
  const response = await fetch(`${stack.api.url}/ui${path}`, { redirect: "manual", ...init });
  const setCookie = response.headers.get("set-cookie") ?? "";
  return { status: response.status, text: await response.text(), cookie: setCookie.split(";")[0] ?? "", setCookie };
}

/** A GET naming `host` in its Host header (fetch sets its own). */
function getAs(host: string, path: string): Promise<{ status: number; setCookie: string }> {
  const url = new URL(`${stack.api.url}/ui${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ hostname: url.hostname, port: url.port, path: url.pathname, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, setCookie: String(res.headers["set-cookie"] ?? "") }));
    });
    req.on("error", reject);
    req.end();
  });
}

const tokenOf = (page: string): string => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";

describe("the console on loopback without API keys", () => {
  it("serves default/loopback with a session of its own, whose token every form must bring back", async () => {
    const id = await startRun(stack, {
      script: `import { sleep } from "rewind:tools";\nexport default async function main() { await sleep("1 hour"); }`,
    });
    await waitFor(
      `run ${id} to sleep`,
      async () => (await stack.request("GET", `/v1/runs/${id}/journal`)).body["entries"],
      {
        until: (entries) => Array.isArray(entries) && entries.length === 1,
      },
    );
    const first = await visit(`/runs/${id}`);
    expect(first.status).toBe(200);
    expect(first.text).toContain("default/loopback");
    expect(first.setCookie).toMatch(
      /^rewind_console=sb1(?:\.[\w-]+){3}; Path=\/ui; Expires=[^;]+; HttpOnly; SameSite=Strict$/,
    );
    const token = tokenOf(first.text);
    expect(token).not.toBe("");
    const cancel = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      visit(`/runs/${id}/cancel`, {
        method: "POST",
        headers: { cookie: first.cookie, origin: stack.api.url, ...headers },
        body: new URLSearchParams(fields),
      });
    expect((await cancel({})).status).toBe(403);
    expect((await cancel({ _csrf: token }, { origin: "https://elsewhere.example" })).status).toBe(403);
    expect((await cancel({ _csrf: token }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await stack.request("GET", `/v1/runs/${id}`)).body.status).toBe("running");
    const done = await cancel({ _csrf: token });
    expect(done.status).toBe(303);
    expect((await waitForRun(stack, id)).status).toBe("cancelled");
  });

  it("keeps a session across a restart of the API: the same cookie and form token decide on the new process", async () => {
    const id = await startRun(stack, {
      script: `import { sleep } from "rewind:tools";\nexport default async function main() { await sleep("1 hour"); }`,
    });
    const page = await visit(`/runs/${id}`);
    const token = tokenOf(page.text);
    expect(token).not.toBe("");
    await stack.api.stop();
    stack.api = await startApi(stack.config, stack.address, undefined, silentLogger);
    const cancelled = await visit(`/runs/${id}/cancel`, {
      method: "POST",
      headers: { cookie: page.cookie, origin: stack.api.url },
      body: new URLSearchParams({ _csrf: token }),
    });
    expect(cancelled.status, cancelled.text.replace(/\s+/g, " ").slice(-400)).toBe(303);
    expect(cancelled.setCookie, "no new session was needed").toBe("");
    expect((await waitForRun(stack, id)).status).toBe("cancelled");
  });

  it("answers only to a loopback host name", async () => {
    const rebound = await getAs(`attacker.example:${new URL(stack.api.url).port}`, "/runs");
    expect(rebound.status).toBe(403);
    expect(rebound.setCookie).toBe("");
    expect((await getAs("localhost", "/runs")).status).toBe(200);
  });

  it("serves its assets, and nothing it was not given", async () => {
    const page = await visit("/runs");
    const css = /href="(\/ui\/assets\/console\.[0-9a-f]{12}\.css)"/.exec(page.text)?.[1];
    const js = /src="(\/ui\/assets\/console\.[0-9a-f]{12}\.js)"/.exec(page.text)?.[1];
    expect(css && js).toBeTruthy();
    const script = await fetch(`${stack.api.url}${js ?? ""}`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("cache-control")).toContain("immutable");
    expect((await visit("/assets/console.css")).status).toBe(404);
    expect((await visit("/assets/../../package.json")).status).toBe(404);
  });
});
