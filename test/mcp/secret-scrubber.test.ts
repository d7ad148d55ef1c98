/**
 * The scrubber as a table: for each way a credential is written in a header, what a server may
 * quote back of it and what it must leave alone. Each echo is scrubbed by the pieces derived from
 * the credentials (`secretPartsOf`) alone: nothing here is told which substring is secret.
 */
import { describe, expect, it } from "vitest";
import { createScrubber, scrubberFor, secretPartsOf } from "../../src/mcp/index.ts";

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

type Row = {
  case: string;
  headers: Record<string, string>;
  url?: string;
  /** What the server sends back, and what must be left of it. */
  echo: string;
  scrubbed: string;
};

const TABLE: Row[] = [
  {
    case: "the whole header value",
    headers: { "x-api-key": "k3y-0123456789" },
    echo: "got k3y-0123456789",
    scrubbed: "got [redacted]",
  },
  {
    case: "a Bearer token without its scheme",
    headers: { authorization: "Bearer tok_abcdef123456" },
    echo: 'invalid token "tok_abcdef123456"',
    scrubbed: 'invalid token "[redacted]"',
  },
  {
    case: "a short Bearer token (6 characters)",
    headers: { authorization: "Bearer s3cr3t" },
    echo: "token s3cr3t refused",
    scrubbed: "token [redacted] refused",
  },
  {
    case: "each cookie value, apart",
    headers: { cookie: "theme=dark; sid=sess-42abcd; csrf=c5rf-zz99" },
    echo: "session sess-42abcd, csrf c5rf-zz99, theme dark",
    scrubbed: "session [redacted], csrf [redacted], theme dark",
  },
  {
    case: "a cookie pair as sent",
    headers: { cookie: "sid=sess-42abcd" },
    echo: "Cookie: sid=sess-42abcd",
    scrubbed: "Cookie: [redacted]",
  },
  {
    case: "Basic: the encoded pair, the decoded pair, the user and the password",
    headers: { authorization: basic("alice-admin", "hunter2") },
    echo: `${basic("alice-admin", "hunter2").slice(6)} is alice-admin:hunter2; user alice-admin, password hunter2`,
    scrubbed: "[redacted] is [redacted]; user [redacted], password [redacted]",
  },
  {
    case: "Basic: a four-character password",
    headers: { authorization: basic("bob", "pa55") },
    echo: "wrong password pa55",
    scrubbed: "wrong password [redacted]",
  },
  {
    case: "a quoted auth-param value",
    headers: { authorization: 'Token token="q-9f8e7d6c", realm="api"' },
    echo: "token q-9f8e7d6c is not valid",
    scrubbed: "token [redacted] is not valid",
  },
  {
    case: "a quoted auth-param value with an escaped quote, as JSON would quote it",
    headers: { authorization: 'Token token="a\\"b-123456"' },
    echo: JSON.stringify({ received: 'a"b-123456' }),
    scrubbed: JSON.stringify({ received: "[redacted]" }),
  },
  {
    case: "an unquoted auth-param value",
    headers: { authorization: "Digest username=carol, response=6629fae49393a053" },
    echo: "response 6629fae49393a053 does not match",
    scrubbed: "response [redacted] does not match",
  },
  {
    case: "a challenge's scope quoting the token",
    headers: { authorization: "Bearer scope-tok-777" },
    echo: "admin Bearer scope-tok-777",
    scrubbed: "admin [redacted]",
  },
  {
    case: "a value quoted URL-encoded",
    headers: { "x-token": "a b/c+d=e&f" },
    echo: `redirect?t=${encodeURIComponent("a b/c+d=e&f")}`,
    scrubbed: "redirect?t=[redacted]",
  },
  {
    case: "the URL's userinfo and query values",
    headers: {},
    url: "https://user1:pa%24%24word@mcp.example/x?key=qk-123456&n=1",
    echo: "auth pa$$word pa%24%24word key qk-123456",
    scrubbed: "auth [redacted] [redacted] key [redacted]",
  },
  {
    case: "short everyday values are left alone",
    headers: { "accept-language": "en", "x-flag": "yes", cookie: "theme=dark" },
    echo: "theme dark in en, yes",
    scrubbed: "theme dark in en, yes",
  },
];

describe("the scrubber, by the parts a header is made of", () => {
  it.each(TABLE)("$case", (row) => {
    const scrubber = scrubberFor(row.headers, row.url ?? "https://mcp.example/mcp");
    expect(scrubber.text(row.echo)).toBe(row.scrubbed);
  });

  it("the longest piece wins: a value and the token inside it leave one mark", () => {
    const scrubber = scrubberFor({ authorization: "Bearer tok_abcdef123456" }, "https://mcp.example/");
    expect(scrubber.text("Bearer tok_abcdef123456")).toBe("[redacted]");
  });

  it("scrubs every string and key of a value, and leaves other values as they are", () => {
    const scrubber = scrubberFor({ cookie: "sid=sess-42abcd" }, "https://mcp.example/");
    const listed = {
      name: "whoami",
      description: "Acts as sess-42abcd",
      inputSchema: {
        type: "object",
        properties: { "sess-42abcd": { type: "string", enum: ["sess-42abcd", "other"], default: "sid=sess-42abcd" } },
      },
      annotations: { title: "for sess-42abcd", readOnlyHint: true, priority: 3 },
    };
    expect(scrubber.value(listed)).toEqual({
      name: "whoami",
      description: "Acts as [redacted]",
      inputSchema: {
        type: "object",
        properties: { "[redacted]": { type: "string", enum: ["[redacted]", "other"], default: "[redacted]" } },
      },
      annotations: { title: "for [redacted]", readOnlyHint: true, priority: 3 },
    });
    expect(listed.description).toBe("Acts as sess-42abcd");
  });

  it("no credentials: text and values pass through untouched", () => {
    const scrubber = scrubberFor({}, "https://mcp.example/mcp");
    const value = { a: ["x"] };
    expect(scrubber.value(value)).toBe(value);
    expect(scrubber.text("anything")).toBe("anything");
  });

  it("derives the parts once per credential set, longest first, each form once", () => {
    const parts = secretPartsOf({ authorization: basic("alice-admin", "hunter2") }, "https://mcp.example/");
    expect(parts).toEqual([...parts].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)));
    expect(new Set(parts).size).toBe(parts.length);
    expect(parts).toEqual(expect.arrayContaining(["alice-admin:hunter2", "alice-admin", "hunter2"]));
  });

  it("a piece with regular-expression characters is matched as text", () => {
    const scrubber = createScrubber(["a.b*c(d)"]);
    expect(scrubber.text("a.b*c(d) and axbbbcd")).toBe("[redacted] and axbbbcd");
  });
});
