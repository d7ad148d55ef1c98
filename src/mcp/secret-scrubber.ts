/**
 * The one scrubber of what an MCP server sends back. A server may echo what it was sent — in a
 * tool's description or schema, a result, an error, a progress message, a question, a
 * challenge's `scope` — and not always whole: a cookie's value, the password inside a Basic
 * header, a quoted auth-param. So each credential set is taken apart once into the pieces a
 * server could quote (`secretPartsOf`), and everything the server sends is rewritten with each
 * piece replaced by `[redacted]` before it reaches a toolset document, the sandbox, a journal,
 * Temporal history, an event or a log line.
 */

export const REDACTED = "[redacted]";

/** Whole header values shorter than this are left alone (a `1`, a `yes`): they are not secrets. */
const MIN_VALUE = 4;
/** A piece taken out of a value must be this long; shorter ones (`dark`, `en`) are everyday words. */
const MIN_PART = 6;
/** A word of a value without structure (split on spaces, commas, semicolons) must be this long. */
const MIN_WORD = 8;

/** `name=value` and `name="quoted value"` pairs (RFC 9110 auth-params, cookies, parameters). */
const PAIR = /([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,;"]+))/g;

function basicParts(token: string): string[] {
  if (!/^[A-Za-z0-9+/=_-]+$/.test(token)) return [];
  const decoded = Buffer.from(token, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  // Not Basic credentials if it did not decode to printable `user:password`.
  if (colon < 0 || /[\u0000-\u001f\ufffd]/.test(decoded)) return [];
  return [decoded, decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** The pieces of one header value a server could quote back, the whole value first. */
function partsOfValue(raw: string): string[] {
  const value = raw.trim();
  const parts: string[] = [];
  const add = (part: string, min = MIN_PART) => {
    if (part.length >= min) parts.push(part);
  };
  add(value, MIN_VALUE);
  // `<scheme> <credentials>`: Bearer, Basic, Token, Digest…
  const scheme = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S[\s\S]*)$/.exec(value);
  if (scheme?.[1] && scheme[2]) {
    const rest = scheme[2].trim();
    add(rest);
    if (scheme[1].toLowerCase() === "basic") {
      const [both, user, password] = basicParts(rest);
      if (both !== undefined) add(both, MIN_VALUE);
      if (user !== undefined) add(user);
      // A short password is still the secret of the pair.
      if (password !== undefined) add(password, MIN_VALUE);
    }
  }
  for (const match of value.matchAll(PAIR)) {
    const quoted = match[2];
    add(quoted === undefined ? (match[3] ?? "") : quoted.replace(/\\(.)/g, "$1"));
    add(match[0]);
  }
  for (const word of value.split(/[\s,;]+/)) add(word, MIN_WORD);
  return parts;
}

/** The forms a piece takes when a server quotes it in JSON text or in a URL. */
function encodings(part: string): string[] {
  const json = JSON.stringify(part).slice(1, -1);
  const url = encodeURIComponent(part);
  return [part, json, url].filter((form, index, all) => all.indexOf(form) === index);
}

/**
 * Every piece of these credentials that must never appear in what the server sends back: each
 * header value, and what it is made of (its token, each auth-param and cookie value, the user and
 * password of Basic, each long word), plus the URL's userinfo and query values. Longest first.
 */
export function secretPartsOf(headers: Record<string, string> | undefined, url: string): string[] {
  const parts = new Set<string>();
  for (const value of Object.values(headers ?? {})) for (const part of partsOfValue(value)) parts.add(part);
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    const add = (part: string) => {
      if (part.length >= MIN_VALUE) parts.add(part);
    };
    for (const part of [parsed.username, parsed.password, parsed.search.slice(1)]) {
      add(part);
      add(safeDecode(part));
    }
    for (const value of parsed.searchParams.values()) add(value);
  }
  const forms = new Set<string>();
  for (const part of parts) for (const form of encodings(part)) forms.add(form);
  return [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export interface Scrubber {
  /** The pieces it replaces, longest first. */
  readonly parts: readonly string[];
  /** `text` with every piece replaced by `[redacted]`. */
  text(text: string): string;
  /** `value` with every string and key in it scrubbed (a copy; the input is not changed). */
  value<T>(value: T): T;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A scrubber of these pieces: one pass of one alternation, longest piece first, per string. */
export function createScrubber(parts: readonly string[]): Scrubber {
  const sorted = [...new Set(parts)].filter((p) => p.length > 0).sort((a, b) => b.length - a.length);
  const pattern = sorted.length === 0 ? undefined : new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  const text = (input: string): string => (pattern ? input.replace(pattern, REDACTED) : input);
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [text(name), walk(item)]));
  };
  return {
    parts: sorted,
    text,
    value: <T>(value: T): T => (pattern ? (walk(value) as T) : value),
  };
}

/** The scrubber of the credentials a request carries: its headers and its URL. */
export function scrubberFor(headers: Record<string, string> | undefined, url: string): Scrubber {
  return createScrubber(secretPartsOf(headers, url));
}
