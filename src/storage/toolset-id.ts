/**
 * The content address of a pinned toolset: SHA-256 of its RFC 8785 canonical JSON. The same
 * document gives the same id on any machine and in any key order; any change to a tool, schema,
 * policy or server gives another.
 */
import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";
import type { PinnedToolset } from "../shared/index.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

export function toolsetId(document: PinnedToolset): string {
  return `ts_${createHash("sha256").update(canonicalJson(document)).digest("hex")}`;
}
