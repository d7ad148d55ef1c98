/**
 * Maps each request to a Rewind namespace (tenant). With API keys configured, a request needs
 * `Authorization: Bearer <key>`; without any, only loopback callers are served, as `default`,
 * so an API bound to a wider address by mistake still refuses the network.
 */
import { timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { HttpError } from "./http-error.ts";

export const DEFAULT_NAMESPACE = "default";

declare module "express-serve-static-core" {
  interface Request {
    /** The caller's Rewind namespace, set by the auth middleware. */
    namespace?: string;
  }
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function findNamespace(keys: Map<string, string>, presented: string): string | undefined {
  const given = Buffer.from(presented);
  let match: string | undefined;
  for (const [key, namespace] of keys) {
    const expected = Buffer.from(key);
    if (expected.length === given.length && timingSafeEqual(expected, given)) match = namespace;
  }
  return match;
}

export function createAuth(keys: Map<string, string>): RequestHandler {
  return function authenticate(req, _res, next) {
    if (keys.size === 0) {
      if (!isLoopback(req.socket.remoteAddress)) {
        next(new HttpError(401, "unauthorized", "this API serves only loopback callers until REWIND_API_KEYS is set"));
        return;
      }
      req.namespace = DEFAULT_NAMESPACE;
      next();
      return;
    }
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const namespace = match?.[1] ? findNamespace(keys, match[1]) : undefined;
    if (!namespace) {
      next(new HttpError(401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>"));
      return;
    }
    req.namespace = namespace;
    next();
  };
}

export function namespaceOf(req: Request): string {
  if (!req.namespace) throw new Error("auth middleware did not run");
  return req.namespace;
}
