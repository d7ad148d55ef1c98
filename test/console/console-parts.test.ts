/**
 * The console's parts that need no stack: the template that escapes whatever it is given, what
 * a run waits for in words (read back from the very lines a run writes as its current details,
 * so the two cannot drift apart unnoticed), where a script calls its tools, the answer read back
 * from a question's form, and the sessions' bounds.
 */
import { describe, expect, it } from "vitest";
import { html, join } from "../../src/api/console/html.ts";
import { contentOf } from "../../src/api/console/elicitation-form.ts";
import { createSessionStore, isSessionToken } from "../../src/api/console/sessions.ts";
import { createSecretBox, generateSecretKey } from "../../src/credentials/secret-box.ts";
import { detailsWaits, journalWaits, openBadge, waitWords, type Wait } from "../../src/api/console/waits.ts";
import { findCallSites } from "../../src/declarations/index.ts";
import type { JournalEntry } from "../../src/shared/index.ts";
import { describeActivity } from "../../src/workflows/run/run-details.ts";

describe("html", () => {
  it("escapes every value but HTML it built itself", () => {
    const evil = `<img src=x onerror="alert('x')">&`;
    expect(html`<p title="${evil}">${evil}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</p>',
    );
    const list = ["<a>", html`<li>ok</li>`, null, false, undefined, 3];
    // prettier-ignore
    expect(html`<ul>${list}</ul>`.text).toBe("<ul>&lt;a&gt;<li>ok</li>3</ul>");
    expect(join(["<b>", html`<i></i>`], " & ").text).toBe("&lt;b&gt; &amp; <i></i>");
  });
});

const entry = (seq: number, tool: string, args: unknown, status: JournalEntry["status"] = "running"): JournalEntry => ({
  seq,
  tool,
  args,
  status,
  attempts: 1,
  issuedAt: Date.parse("2026-12-01T12:00:00Z"),
});

describe("what a run waits for", () => {
  const inFlight = [
    entry(1, "rewind.sleep", { ms: 2 * 3600_000 }),
    entry(2, "rewind.waitForSignal", { name: 'go "now"', timeoutMs: 3600_000 }),
    entry(3, "rewind.waitForSignal", { name: "done" }),
    entry(4, "rewind.workflows.result", { runId: "run_01ABCDEFGHJK" }),
    entry(5, "tickets.create_ticket", {}),
    entry(6, "tickets.list", {}),
    entry(7, "tickets.list", {}, "pending"),
  ];
  const parked = [
    { seq: 5, tool: "tickets.create_ticket", reason: "approval" as const, details: {} },
    { seq: 6, tool: "tickets.list", reason: "credentialsExpired" as const, details: { scope: "run" as const } },
  ];

  it("reads the built-ins' waits back from the lines a run writes, as from its journal", () => {
    const details = describeActivity({ state: "parked", parked, inFlight });
    const expected: Wait[] = [
      { kind: "sleep", seq: 1, until: Date.parse("2026-12-01T14:00:00Z") },
      { kind: "signal", seq: 2, name: 'go "now"', until: Date.parse("2026-12-01T13:00:00Z") },
      { kind: "signal", seq: 3, name: "done" },
      { kind: "child", seq: 4, runId: "run_01ABCDEFGHJK" },
    ];
    expect(detailsWaits(details)).toEqual([...expected, { kind: "activity", text: "1 call queued: tickets.list #7" }]);
    expect(journalWaits(inFlight, new Set([5, 6]))).toEqual([...expected, { kind: "activity", text: "1 call queued" }]);
    expect(detailsWaits("running the script")).toEqual([{ kind: "activity", text: "running the script" }]);
  });

  it("says each in words", () => {
    const now = Date.parse("2026-12-01T12:30:00Z");
    const words = (wait: Wait) => waitWords(wait, now).text.replace(/\s+/g, " ");
    expect(words({ kind: "parked", seq: 2, tool: "tickets.create_ticket", reason: "approval" })).toBe(
      "approval of call 2 <code>tickets.create_ticket</code>",
    );
    expect(words({ kind: "parked", seq: 4, tool: "github.list", reason: "credentialsExpired", scope: "run" })).toBe(
      "credentials for <code>github</code> (run scope), call 4",
    );
    expect(words({ kind: "signal", seq: 3, name: "go", until: Date.parse("2026-12-01T14:00:00Z") })).toBe(
      'signal <code>go</code> until <time datetime="2026-12-01T14:00:00.000Z">14:00:00 UTC</time>',
    );
    expect(words({ kind: "sleep", seq: 1, until: Date.parse("2026-12-03T09:00:00Z") })).toBe(
      'sleeping until <time datetime="2026-12-03T09:00:00.000Z">2026-12-03 09:00:00 UTC</time>',
    );
    expect(words({ kind: "script" })).toBe("approval of its script");
    expect(openBadge("running", [{ kind: "sleep", seq: 1, until: now }])).toBe("sleeping");
    expect(openBadge("running", [{ kind: "signal", seq: 1, name: "go" }])).toBe("waiting");
    expect(openBadge("parked", [])).toBe("parked");
  });
});

describe("findCallSites", () => {
  it("finds the calls on bindings of rewind:tools, the built-ins and fetch, named as the journal names them", () => {
    const script = [
      `import { tickets, github as gh, sleep, workflows } from "rewind:tools";`,
      `import * as tools from "rewind:tools";`,
      `export default async function main() {`,
      `  await tickets.create_ticket({ title: "a" });`,
      `  await gh.list_issues({}); await sleep("1 s");`,
      `  const local = { create_ticket() {} }; local.create_ticket();`,
      `  await tools.tickets.list({}); await fetch("https://example.com");`,
      `  await workflows.triage.start({});`,
      `}`,
    ].join("\n");
    expect(findCallSites(script)).toEqual([
      { line: 4, tool: "tickets.create_ticket" },
      { line: 5, tool: "github.list_issues" },
      { line: 5, tool: "rewind.sleep" },
      { line: 7, tool: "tickets.list" },
      { line: 7, tool: "http.fetch" },
      { line: 8, tool: "rewind.workflows.start" },
    ]);
  });
});

describe("contentOf", () => {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string" },
      age: { type: "integer" },
      subscribed: { type: "boolean" },
      nickname: { type: "string" },
      tags: { type: "array" },
    },
    required: ["name", "age"],
  };

  it("reads the posted form as the schema's types, leaving out empty optional fields", () => {
    expect(
      contentOf(schema, { "field.name": "Ada", "field.age": "36", "field.nickname": "", "field.tags": '["a"]' }),
    ).toEqual({
      content: { name: "Ada", age: 36, subscribed: false, tags: ["a"] },
    });
    expect(contentOf(schema, { "field.name": "Ada", "field.age": "36", "field.subscribed": "true" })).toEqual({
      content: { name: "Ada", age: 36, subscribed: true },
    });
  });

  it("says which field is not JSON, before anything is sent", () => {
    expect(contentOf(schema, { "field.name": "Ada", "field.age": "1", "field.tags": "[a" })).toEqual({
      problem: expect.stringMatching(/^tags: this is not JSON/) as unknown,
    });
  });
});

describe("sessions", () => {
  const holder = { namespace: "acme", principal: "acme/key-12345678" };
  const key = generateSecretKey();

  it("open in any process that has the secret key, until they expire; not with another key, tampered, or from another sealed value", () => {
    let now = 0;
    const clock = { ttlMs: 1000, now: () => now };
    const made = createSessionStore(createSecretBox(key), () => true, clock).create(holder);
    const elsewhere = createSessionStore(createSecretBox(key), () => true, clock);
    expect(elsewhere.get(made.id)).toEqual(made);
    expect(made.id).not.toContain(made.csrf);
    expect(createSessionStore(createSecretBox(generateSecretKey()), () => true, clock).get(made.id)).toBeUndefined();
    const [version, iv, tag, data = ""] = made.id.split(".");
    const flipped = `${version}.${iv}.${tag}.${data.startsWith("A") ? "B" : "A"}${data.slice(1)}`;
    expect(elsewhere.get(flipped)).toBeUndefined();
    // A credential sealed by the same box is not a session.
    expect(
      elsewhere.get(createSecretBox(key).seal(JSON.stringify({ ...holder, csrf: "x", expiresAt: 5000 }))),
    ).toBeUndefined();
    expect(isSessionToken(made, made.csrf)).toBe(true);
    expect(isSessionToken(made, undefined)).toBe(false);
    now = 1000;
    expect(elsewhere.get(made.id)).toBeUndefined();
  });

  it("end when their key is no longer the API's, and when they sign out in the process that served it", () => {
    const principals = new Set([holder.principal]);
    const store = createSessionStore(createSecretBox(key), (principal) => principals.has(principal));
    const [a, b] = [store.create(holder), store.create(holder)];
    expect(isSessionToken(a, b.csrf)).toBe(false);
    store.delete(a.id);
    expect(store.get(a.id)).toBeUndefined();
    expect(store.get(b.id)).toEqual(b);
    principals.clear();
    expect(store.get(b.id)).toBeUndefined();
  });
});
