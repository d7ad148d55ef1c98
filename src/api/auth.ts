/**
 * Maps each request to a Rewind namespace (tenant) and a principal. With API keys configured, a
 * request needs `Authorization: Bearer <key>`; without any, only loopback callers are served, as
 * `default`, so an API bound to a wider address by mistake still refuses the network. The
 * principal names who called where decisions are recorded: the namespace and a fingerprint of the
 * key (`acme/key-1a2b3c4d`, the first 8 hex digits of its SHA-256), or `default/loopback`; never
 * the key itself.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { HttpError } from "./http-error.ts";

export const DEFAULT_NAMESPACE = "default";
/** Who a loopback caller is when the API has no keys. */
export const LOOPBACK_PRINCIPAL = `${DEFAULT_NAMESPACE}/loopback`;

declare module "express-serve-static-core" {
  interface Request {
    /** The caller's Rewind namespace, set by the auth middleware. */
    namespace?: string;
    /** Who the caller is (namespace and key fingerprint), set by the auth middleware. */
    principal?: string;
  }
}

/** A key's fingerprint: enough to tell keys apart in a record, too little to matter if read. */
export function keyFingerprint(key: string): string {
  return `key-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

/** Whom a key opens: its namespace, and the principal decisions made with it are recorded as. */
export interface KeyHolder {
  namespace: string;
  principal: string;
}

function findHolder(keys: Map<Buffer, KeyHolder>, presented: string): KeyHolder | undefined {
  const given = Buffer.from(presented);
  let match: KeyHolder | undefined;
  for (const [expected, holder] of keys) {
    if (expected.length === given.length && timingSafeEqual(expected, given)) match = holder;
  }
  return match;
}

/** Who a key's holder is: its namespace and the key's fingerprint, never the key. */
function keyPrincipal(namespace: string, key: string): string {
  return `${namespace}/${keyFingerprint(key)}`;
}

/** Who holds a presented key, if it is one of `apiKeys` (the console's sign-in asks it too). */
export function createKeyCheck(apiKeys: Map<string, string>): (presented: string) => KeyHolder | undefined {
  const keys = new Map(
    [...apiKeys].map(([key, namespace]) => [Buffer.from(key), { namespace, principal: keyPrincipal(namespace, key) }]),
  );
  return (presented) => findHolder(keys, presented);
}

/** The principals the API's keys give (`default/loopback` alone when it has none): who may hold a console session. */
export function principalsOf(apiKeys: Map<string, string>): ReadonlySet<string> {
  if (apiKeys.size === 0) return new Set([LOOPBACK_PRINCIPAL]);
  return new Set([...apiKeys].map(([key, namespace]) => keyPrincipal(namespace, key)));
}

export function createAuth(apiKeys: Map<string, string>): RequestHandler {
  const holderOf = createKeyCheck(apiKeys);
  const keyed = apiKeys.size > 0;
  return function authenticate(req, _res, next) {
    if (!keyed) {
      if (!isLoopback(req.socket.remoteAddress)) {
        next(new HttpError(401, "unauthorized", "this API serves only loopback callers until REWIND_API_KEYS is set"));
        return;
      }
      req.namespace = DEFAULT_NAMESPACE;
      req.principal = LOOPBACK_PRINCIPAL;
      next();
      return;
    }
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const holder = match?.[1] ? holderOf(match[1]) : undefined;
    if (!holder) {
      next(new HttpError(401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>"));
      return;
    }
    req.namespace = holder.namespace;
    req.principal = holder.principal;
    next();
  };
}

export function namespaceOf(req: Request): string {
  if (!req.namespace) throw new Error("auth middleware did not run");
  return req.namespace;
}

export function principalOf(req: Request): string {
  if (!req.principal) throw new Error("auth middleware did not run");
  return req.principal;
}
