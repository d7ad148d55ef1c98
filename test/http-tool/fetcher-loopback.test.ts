/**
 * The fetcher against a real node:http server on 127.0.0.1, reached through the test-only
 * loopback option and a resolver that maps made-up names to chosen addresses. Covers the happy
 * path, address pinning, redirects and their re-checks, credential headers across origins,
 * proxy variables and TLS server names. The connect guard stops any non-loopback socket.
 */
import net from "node:net";
import type http from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGuardedFetcher, HttpRefusal } from "../../src/http-tool/index.ts";
import {
  guardConnects,
  startLoopbackServer,
  tableResolver,
  type ConnectGuard,
  type LoopbackServer,
} from "../helpers/http-loopback.ts";

function echo(req: http.IncomingMessage, res: http.ServerResponse): void {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => {
    body += chunk;
  });
  req.on("end", () => {
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("x-multi", ["a", "b"]);
    res.end(JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body }));
  });
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://placeholder");
  const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
  if (url.pathname === "/redirect") {
    req.resume();
    res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to") ?? "/" }).end();
  } else if (chain) {
    const left = Number(chain[1]);
    if (left === 0) res.end("done");
    else res.writeHead(302, { location: `/chain/${left - 1}` }).end();
  } else {
    echo(req, res);
  }
}

let server: LoopbackServer;
let guard: ConnectGuard;
let origin: string;
let list: string[];
const dns = tableResolver({
  "test.local": ["127.0.0.1"],
  "other.local": ["127.0.0.1"],
  "private.local": ["10.0.0.1"],
  "evil.local": ["127.0.0.1"],
});
const fetcher = createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true });

beforeAll(async () => {
  server = await startLoopbackServer(route);
  origin = `http://test.local:${server.port}`;
  list = [`test.local:${server.port}`, `other.local:${server.port}`, `private.local:${server.port}`];
});
afterAll(() => server.close());
beforeEach(() => {
  guard = guardConnects();
});
afterEach(() => {
  guard.restore();
  expect(guard.blocked).toEqual([]);
});

async function refusal(promise: Promise<unknown>): Promise<HttpRefusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpRefusal);
  return error as HttpRefusal;
}

function echoed(body: string): { method: string; path: string; headers: Record<string, string>; body: string } {
  return JSON.parse(body) as ReturnType<typeof echoed>;
}

describe("fetcher against loopback", () => {
  it("sends GET and POST with headers and body, with the original Host header", async () => {
    const get = await fetcher({ url: `${origin}/echo?q=1` }, list);
    expect(get).toMatchObject({
      status: 200,
      statusText: "OK",
      url: `${origin}/echo?q=1`,
      bodyEncoding: "utf8",
      redirects: 0,
    });
    expect(get.headers["x-multi"]).toBe("a, b");
    expect(echoed(get.body)).toMatchObject({
      method: "GET",
      path: "/echo?q=1",
      headers: { host: `test.local:${server.port}`, "user-agent": "rewind-http-tool" },
    });

    const post = await fetcher(
      {
        url: `${origin}/echo`,
        method: "post",
        body: '{"a":1}',
        headers: {
          "Content-Type": "application/json",
          "X-Custom": "yes",
          Host: "evil.example",
          "Content-Length": "999",
          Connection: "upgrade",
        },
      },
      list,
    );
    const seen = echoed(post.body);
    expect(seen).toMatchObject({ method: "POST", body: '{"a":1}' });
    expect(seen.headers).toMatchObject({
      host: `test.local:${server.port}`,
      "content-type": "application/json",
      "x-custom": "yes",
      "content-length": "7",
    });
    expect(guard.attempts.every((target) => target === "127.0.0.1")).toBe(true);
  });

  it("resolves once and connects to the first answer, even if the name would re-resolve elsewhere", async () => {
    const flipping = tableResolver({ "flip.local": (call) => (call === 1 ? ["127.0.0.1"] : ["10.0.0.1"]) });
    const fetch = createGuardedFetcher({ resolve: flipping.resolve, allowLoopbackForTests: true });
    const response = await fetch({ url: `http://flip.local:${server.port}/echo` }, [`flip.local:${server.port}`]);
    expect(echoed(response.body).headers.host).toBe(`flip.local:${server.port}`);
    expect(flipping.calls).toEqual(["flip.local"]);
    expect(guard.attempts).toEqual(["127.0.0.1"]);
    // Each hop is a new resolution and a new check: the second answer is refused.
    const redirected = fetch({ url: `http://flip.local:${server.port}/redirect?to=/echo` }, [
      `flip.local:${server.port}`,
    ]);
    expect((await refusal(redirected)).rule).toBe("address:private");
  });

  it("re-checks redirects: private addresses, hosts off the list, schemes", async () => {
    const connectionsBefore = server.connections();
    const toPrivate = await refusal(
      fetcher({ url: `${origin}/redirect?to=http://private.local:${server.port}/echo` }, list),
    );
    expect(toPrivate.rule).toBe("address:private");
    expect(toPrivate.message).toContain("private.local");
    expect(guard.attempts).toEqual(["127.0.0.1"]); // the first hop only: nothing dialed 10.0.0.1
    expect(server.connections() - connectionsBefore).toBe(1);

    const offList = await refusal(fetcher({ url: `${origin}/redirect?to=http://evil.local:${server.port}/` }, list));
    expect(offList.rule).toBe("notAllowed");
    const toFile = await refusal(fetcher({ url: `${origin}/redirect?to=file:///etc/passwd` }, list));
    expect(toFile.rule).toBe("scheme");
  });

  it("follows 5 redirects and refuses the 6th", async () => {
    const five = await fetcher({ url: `${origin}/chain/5` }, list);
    expect(five).toMatchObject({ status: 200, body: "done", redirects: 5, url: `${origin}/chain/0` });
    expect((await refusal(fetcher({ url: `${origin}/chain/6` }, list))).rule).toBe("redirects");
  });

  it("switches to GET without a body on 303 and on 302 after POST, keeps both on 307", async () => {
    const post = { method: "POST", body: "payload", headers: { "content-type": "text/plain" } };
    for (const status of [302, 303]) {
      const response = await fetcher({ url: `${origin}/redirect?status=${status}&to=/echo`, ...post }, list);
      expect(echoed(response.body)).toMatchObject({ method: "GET", body: "" });
      expect(echoed(response.body).headers["content-type"]).toBeUndefined();
    }
    const kept = await fetcher({ url: `${origin}/redirect?status=307&to=/echo`, ...post }, list);
    expect(echoed(kept.body)).toMatchObject({ method: "POST", body: "payload" });
  });

  it("keeps only allow-listed headers on a cross-origin redirect and every header on a same-origin one", async () => {
    const headers = {
      Authorization: "Bearer t0ken",
      Cookie: "s=1",
      "X-Api-Key": "k",
      "X-Functions-Key": "f",
      "Ocp-Apim-Subscription-Key": "o",
      "X-Goog-Iap-Jwt-Assertion": "j",
      "X-Custom": "c",
      Accept: "application/json",
      "Idempotency-Key": "run_x/1",
    };
    const same = echoed((await fetcher({ url: `${origin}/redirect?to=/echo`, headers }, list)).body);
    expect(same.headers).toMatchObject({
      authorization: "Bearer t0ken",
      cookie: "s=1",
      "x-api-key": "k",
      "x-functions-key": "f",
      "x-custom": "c",
    });

    const to = `http://other.local:${server.port}/redirect?to=${encodeURIComponent(`${origin}/echo`)}`;
    const cross = await fetcher({ url: `${origin}/redirect?to=${encodeURIComponent(to)}`, headers }, list);
    const seen = echoed(cross.body);
    expect(cross.redirects).toBe(2);
    expect(seen.headers).toMatchObject({ accept: "application/json", "idempotency-key": "run_x/1" });
    // Gone for good, even once the chain comes back to the first origin.
    for (const name of [
      "authorization",
      "cookie",
      "x-api-key",
      "x-functions-key",
      "ocp-apim-subscription-key",
      "x-goog-iap-jwt-assertion",
      "x-custom",
    ]) {
      expect(seen.headers[name]).toBeUndefined();
    }
  });

  it("refuses non-http schemes, userinfo and unlisted ports", async () => {
    for (const url of ["ftp://test.local/", "file:///etc/passwd", "data:text/plain,hi", "javascript:alert(1)"]) {
      expect((await refusal(fetcher({ url }, ["test.local"]))).rule).toBe("scheme");
    }
    expect((await refusal(fetcher({ url: `http://user:pass@test.local:${server.port}/` }, list))).rule).toBe(
      "userinfo",
    );
    expect((await refusal(fetcher({ url: `${origin}/echo` }, ["test.local"]))).rule).toBe("port");
    expect((await refusal(fetcher({ url: `http://test.local:${server.port + 1}/` }, list))).rule).toBe("port");
  });

  it("ignores proxy environment variables", async () => {
    let proxied = 0;
    const proxy = net.createServer((socket) => {
      proxied += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const names = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy"];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    try {
      for (const name of names) process.env[name] = name.toLowerCase().startsWith("no_") ? "" : proxyUrl;
      const response = await createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true })(
        { url: `${origin}/echo` },
        list,
      );
      expect(response.status).toBe(200);
      expect(proxied).toBe(0);
    } finally {
      for (const name of names) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it("dials the pinned address over TLS with the host name as SNI", async () => {
    let hello: Buffer = Buffer.alloc(0);
    const raw = net.createServer((socket) =>
      socket.once("data", (chunk: Buffer) => {
        hello = chunk;
        socket.destroy();
      }),
    );
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const port = (raw.address() as net.AddressInfo).port;
    try {
      const fetch = createGuardedFetcher({
        resolve: tableResolver({ "secure.local": ["127.0.0.1"] }).resolve,
        allowLoopbackForTests: true,
      });
      const error = await refusal(fetch({ url: `https://secure.local:${port}/` }, [`secure.local:${port}`]));
      expect(error.rule).toBe("connect");
      expect(guard.attempts).toEqual(["127.0.0.1"]);
      expect(hello[0]).toBe(0x16); // a TLS handshake record: the ClientHello
      expect(hello.includes(Buffer.from("secure.local"))).toBe(true);
    } finally {
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });
});
