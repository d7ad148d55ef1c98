/**
 * The outbound target policy on its own, against loopback servers: refused targets are refused
 * before any socket opens (the connect guard and a counting server both see nothing), trusted
 * hosts and ranges get through on connections pinned to what one lookup answered, redirects are
 * checked again, and without keys nothing changes.
 */
import type http from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTargetPolicy, TargetRefusal, type TargetPolicyOptions } from "../../src/http-tool/index.ts";
import {
  guardConnects,
  startLoopbackServer,
  tableResolver,
  type ConnectGuard,
  type LoopbackServer,
} from "../helpers/http-loopback.ts";

let counter: LoopbackServer;
let site: LoopbackServer;
let requests: { url: string; headers: http.IncomingHttpHeaders }[];
let guard: ConnectGuard;
let closedPort: number;

beforeAll(async () => {
  requests = [];
  counter = await startLoopbackServer((_req, res) => res.end("counter"));
  site = await startLoopbackServer((req, res) => {
    requests.push({ url: req.url ?? "", headers: req.headers });
    const to = new URL(req.url ?? "/", "http://x").searchParams.get("to");
    if (to) res.writeHead(307, { location: to }).end();
    else res.end(`site ${req.method} ${req.url}`);
  });
  const spare = await startLoopbackServer(() => undefined);
  closedPort = spare.port;
  await spare.close();
});
afterAll(async () => {
  await counter.close();
  await site.close();
});
beforeEach(() => {
  guard = guardConnects();
});
afterEach(() => {
  guard.restore();
  expect(guard.blocked).toEqual([]);
  expect(counter.connections()).toBe(0);
});

const dns = tableResolver({
  "site.trusted.test": ["127.0.0.1"],
  "loopback.test": ["127.0.0.1"],
  "metadata.test": ["169.254.169.254"],
  "private.test": ["10.1.2.3"],
  "mixed.test": ["93.184.215.14", "127.0.0.1"],
  "fallback.trusted.test": ["127.0.0.3", "127.0.0.1"],
});
const policy = (extra: Partial<TargetPolicyOptions> = {}) =>
  createTargetPolicy({
    guarded: true,
    resolve: dns.resolve,
    trusted: { hosts: ["site.trusted.test", "fallback.trusted.test"], cidrs: ["10.9.0.0/16"] },
    ...extra,
  });

async function refusalOf(promise: Promise<unknown>): Promise<TargetRefusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TargetRefusal);
  return error as TargetRefusal;
}

const LOOPBACK_NOTATIONS = (port: number) => [
  `http://127.0.0.1:${port}/`,
  `http://127.1:${port}/`,
  `http://2130706433:${port}/`,
  `http://0x7f000001:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://127.0.0.2:${port}/`,
  `http://localhost:${port}/`,
  `http://LOCALHOST.:${port}/`,
  `http://[::1]:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`,
  `http://[0:0:0:0:0:ffff:7f00:1]:${port}/`,
  `http://[::127.0.0.1]:${port}/`,
  `http://0.0.0.0:${port}/`,
  `http://0:${port}/`,
  `http://[::]:${port}/`,
  `http://loopback.test:${port}/`,
  `https://127.0.0.1:${port}/`,
  `http://metadata.test:${port}/`,
  `http://169.254.169.254:${port}/`,
  `http://private.test:${port}/`,
  `http://mixed.test:${port}/`,
  `http://unknown-name.test:${port}/`,
  `ftp://127.0.0.1:${port}/`,
];

describe("the outbound target policy, guarded", () => {
  it("refuses every loopback notation, private and metadata answers, before any socket, with the same words for an open and a closed port", async () => {
    const targets = policy();
    const closedUrls = LOOPBACK_NOTATIONS(closedPort);
    for (const [i, open] of LOOPBACK_NOTATIONS(counter.port).entries()) {
      const closed = closedUrls[i] ?? "";
      const onOpen = await refusalOf(targets.check(open));
      const onClosed = await refusalOf(targets.check(closed));
      expect(onOpen.reason).toBe("targetNotAllowed");
      expect(onOpen.message.replace(String(counter.port), "PORT")).toBe(
        onClosed.message.replace(String(closedPort), "PORT"),
      );
      expect(onOpen.message).toMatch(/is not an allowed target/);
      const session = targets.session();
      await refusalOf(session.fetch(open));
      await session.close();
    }
    expect(guard.attempts).toEqual([]);
  });

  it("pins a session to what its one lookup answered; the next session sees an answer turned private and is refused", async () => {
    let answers = ["127.0.0.1"];
    const flipping = tableResolver({ "flip.test": () => answers });
    const targets = policy({ resolve: flipping.resolve, trusted: { hosts: [], cidrs: ["127.0.0.1/32"] } });
    const session = targets.session();
    expect(await (await session.fetch(`http://flip.test:${site.port}/a`)).text()).toBe("site GET /a");
    answers = ["10.1.2.3"];
    expect(await (await session.fetch(`http://flip.test:${site.port}/b`, { method: "POST", body: "x" })).text()).toBe(
      "site POST /b",
    );
    expect(flipping.calls).toEqual(["flip.test"]);
    expect(requests.at(-1)?.headers.host).toBe(`flip.test:${site.port}`);
    await session.close();
    const next = targets.session();
    await refusalOf(next.fetch(`http://flip.test:${site.port}/c`));
    expect(flipping.calls).toHaveLength(2);
    await next.close();
  });

  it("lets a trusted host through whatever it resolves to", async () => {
    const session = policy().session();
    expect(await (await session.fetch(`http://site.trusted.test:${site.port}/t`)).text()).toBe("site GET /t");
    await session.close();
  });

  it("lets a trusted range through, and only it", async () => {
    const targets = policy({ trusted: { hosts: [], cidrs: ["127.0.0.1/32"] } });
    const session = targets.session();
    expect((await session.fetch(`http://127.0.0.1:${site.port}/r`)).status).toBe(200);
    expect((await session.fetch(`http://loopback.test:${site.port}/r`)).status).toBe(200);
    await refusalOf(session.fetch(`http://127.0.0.2:${counter.port}/`));
    await refusalOf(session.fetch(`http://[::1]:${counter.port}/`));
    await session.close();
  });

  it("dials a trusted host's answers in order until one connects", async () => {
    const session = policy().session();
    expect(await (await session.fetch(`http://fallback.trusted.test:${site.port}/f`)).text()).toBe("site GET /f");
    await session.close();
    expect(guard.attempts).toEqual(["127.0.0.3", "127.0.0.1"]);
  });

  it("checks a redirect's target again: a trusted host redirecting to loopback is refused, the counter sees nothing", async () => {
    const session = policy().session();
    for (const to of [
      `http://127.0.0.1:${counter.port}/`,
      `http://localhost:${counter.port}/`,
      `http://[::1]:${counter.port}/`,
      `http://metadata.test:${counter.port}/`,
    ]) {
      const error = await refusalOf(
        session.fetch(`http://site.trusted.test:${site.port}/?to=${encodeURIComponent(to)}`, {
          method: "POST",
          body: "{}",
          headers: { authorization: "Bearer x" },
        }),
      );
      expect(error.message).not.toContain("site.trusted.test");
    }
    // Same origin: followed, with its headers.
    const same = await session.fetch(`http://site.trusted.test:${site.port}/?to=/landed`, {
      headers: { authorization: "Bearer x" },
    });
    expect(await same.text()).toBe("site GET /landed");
    expect(requests.at(-1)?.headers.authorization).toBe("Bearer x");
    await session.close();
  });

  it("hands a redirect back as it is when told not to follow", async () => {
    const session = policy().session({ followRedirects: false });
    const response = await session.fetch(
      `http://site.trusted.test:${site.port}/?to=${encodeURIComponent(`http://127.0.0.1:${counter.port}/`)}`,
      { method: "POST", body: "{}" },
    );
    expect(response.status).toBe(307);
    await response.body?.cancel();
    await session.close();
  });

  it("tells the operator when a trusted name does not resolve, and no one else", async () => {
    const lonely = createTargetPolicy({
      guarded: true,
      resolve: tableResolver({}).resolve,
      trusted: { hosts: ["gone.trusted.test"], cidrs: [] },
    });
    const error = await lonely.check("http://gone.trusted.test/").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(TargetRefusal);
    expect((error as { code?: string }).code).toBe("ENOTFOUND");
    await refusalOf(lonely.check("http://gone.untrusted.test/"));
  });
});

describe("the outbound target policy, off (no API keys)", () => {
  it("checks nothing and fetches as before", async () => {
    const targets = createTargetPolicy({ guarded: false });
    await targets.check(`http://127.0.0.1:${site.port}/`);
    const session = targets.session();
    expect(await (await session.fetch(`http://127.0.0.1:${site.port}/plain`)).text()).toBe("site GET /plain");
    await session.close();
  });
});
