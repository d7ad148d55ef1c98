/**
 * The fetcher's bounds against loopback servers: body size counted after decoding (plain,
 * gzip bomb, chained codings), text versus base64 bodies, and the one deadline that covers every
 * hop, including a server that trickles bytes.
 */
import type http from "node:http";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetcher, HttpRefusal } from "../../src/http-tool/index.ts";
import { startLoopbackServer, tableResolver, type LoopbackServer } from "../helpers/http-loopback.ts";

const MB = 1024 * 1024;
// 512 concatenated gzip members of 1 MB of zeros: ~0.5 MB on the wire, 512 MB decoded.
const bomb = Buffer.concat(Array.from({ length: 512 }, () => zlib.gzipSync(Buffer.alloc(MB), { level: 9 })));
const TEXT = "héllo, wörld ".repeat(1000);
const timers = new Set<NodeJS.Timeout>();

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  req.resume();
  const url = new URL(req.url ?? "/", "http://placeholder");
  const size = Number(url.searchParams.get("size") ?? 0);
  switch (url.pathname) {
    case "/plain":
      res.end(Buffer.alloc(size, 0x61));
      break; // with content-length
    case "/chunked": // no content-length: only counting can stop it
      for (let sent = 0; sent < size; sent += 64 * 1024)
        res.write(Buffer.alloc(Math.min(64 * 1024, size - sent), 0x61));
      res.end();
      break;
    case "/bomb":
      res.writeHead(200, { "content-encoding": "gzip" }).end(bomb);
      break;
    case "/chained": // applied gzip first, then br: "gzip, br"
      res
        .writeHead(200, { "content-encoding": "gzip, br", "content-type": "text/plain; charset=utf-8" })
        .end(zlib.brotliCompressSync(zlib.gzipSync(TEXT)));
      break;
    case "/zstd":
      res.writeHead(200, { "content-encoding": "zstd" }).end(zlib.zstdCompressSync(TEXT));
      break;
    case "/unknown":
      res.writeHead(200, { "content-encoding": "compress" }).end("x");
      break;
    case "/binary":
      res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
      break;
    case "/latin1":
      res
        .writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" })
        .end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      break;
    case "/invalid-utf8":
      res.writeHead(200, { "content-type": "text/plain" }).end(Buffer.from([0xc3, 0x28]));
      break;
    case "/trickle": {
      res.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("."), 100);
      timers.add(timer);
      res.on("close", () => {
        clearInterval(timer);
        timers.delete(timer);
      });
      break;
    }
    case "/slow-redirect": {
      const timer = setTimeout(() => res.writeHead(302, { location: "/slow-redirect" }).end(), 600);
      timers.add(timer);
      break;
    }
    default:
      res.writeHead(404).end();
  }
}

let server: LoopbackServer;
let origin: string;
let list: string[];
const dns = tableResolver({ "test.local": ["127.0.0.1"] });
const fetcher = createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true });

beforeAll(async () => {
  server = await startLoopbackServer(route);
  origin = `http://test.local:${server.port}`;
  list = [`test.local:${server.port}`];
});
afterAll(async () => {
  for (const timer of timers) clearTimeout(timer);
  await server.close();
});

async function refusal(promise: Promise<unknown>): Promise<HttpRefusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpRefusal);
  return error as HttpRefusal;
}

describe("fetcher limits", () => {
  it("refuses a 6 MB body and accepts one at the limit", async () => {
    expect((await refusal(fetcher({ url: `${origin}/plain?size=${6 * MB}` }, list))).rule).toBe("tooLarge");
    const chunked = await refusal(fetcher({ url: `${origin}/chunked?size=${6 * MB}` }, list));
    expect(chunked.rule).toBe("tooLarge");
    expect(chunked.message).toContain("after decoding");
    expect((await fetcher({ url: `${origin}/chunked?size=${5 * MB}` }, list)).body).toHaveLength(5 * MB);
    const small = createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true, maxBytes: 1000 });
    expect((await small({ url: `${origin}/plain?size=1000` }, list)).body).toHaveLength(1000);
    expect((await refusal(small({ url: `${origin}/plain?size=1001` }, list))).rule).toBe("tooLarge");
  });

  it("refuses a gzip bomb by its decoded size", async () => {
    const before = process.memoryUsage().arrayBuffers;
    const error = await refusal(fetcher({ url: `${origin}/bomb` }, list));
    expect(error.rule).toBe("tooLarge");
    expect(error.message).toContain("after decoding");
    // Rough: the 512 MB the bomb inflates to never sits in memory at once.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * MB);
  });

  it("decodes chained codings and zstd, and refuses codings it cannot undo", async () => {
    expect(await fetcher({ url: `${origin}/chained` }, list)).toMatchObject({ body: TEXT, bodyEncoding: "utf8" });
    expect(await fetcher({ url: `${origin}/zstd` }, list)).toMatchObject({ body: TEXT, bodyEncoding: "utf8" });
    expect((await refusal(fetcher({ url: `${origin}/unknown` }, list))).rule).toBe("encoding");
  });

  it("returns text in its charset and binary as base64", async () => {
    expect(await fetcher({ url: `${origin}/latin1` }, list)).toMatchObject({ body: "café", bodyEncoding: "utf8" });
    expect(await fetcher({ url: `${origin}/binary` }, list)).toMatchObject({
      body: "iVBORwD/",
      bodyEncoding: "base64",
    });
    expect(await fetcher({ url: `${origin}/invalid-utf8` }, list)).toMatchObject({
      body: "wyg=",
      bodyEncoding: "base64",
    });
  });

  it("cuts off a server that trickles bytes at the deadline", async () => {
    const quick = createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true, timeoutMs: 1000 });
    const started = Date.now();
    expect((await refusal(quick({ url: `${origin}/trickle` }, list))).rule).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it("applies one deadline to all hops together", async () => {
    // Each hop alone (600 ms) is within 1 s; two of them are not.
    const quick = createGuardedFetcher({ resolve: dns.resolve, allowLoopbackForTests: true, timeoutMs: 1000 });
    const started = Date.now();
    expect((await refusal(quick({ url: `${origin}/slow-redirect` }, list))).rule).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
