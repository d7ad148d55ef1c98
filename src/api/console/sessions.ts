/**
 * Who is signed in to the console. A person signs in with an API key once; the browser then holds
 * a session in an HttpOnly, SameSite=Strict cookie: the key's namespace and principal, the session's
 * form token (CSRF) and its expiry, sealed with the secret key every API process has (AES-256-GCM,
 * the SecretBox credentials use). The key itself is kept nowhere, neither in the cookie nor on the
 * server. Any API process opens a session another made, and a restart signs nobody out.
 *
 * A session ends when it expires, when its key is no longer one of the API's keys (it is asked on
 * every request), or when it signs out: the browser drops the cookie, and the process that served
 * the sign-out refuses the session until it expires (a copy of the cookie taken before then still
 * opens on the other processes until its expiry: keep sessions short where that matters).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { SecretBox } from "../../credentials/index.ts";

export interface ConsoleSession {
  /** The cookie's value: the session, sealed. */
  id: string;
  namespace: string;
  principal: string;
  /** The token every form of this session posts back. */
  csrf: string;
  expiresAt: number;
}

export interface SessionStoreOptions {
  /** Sessions signed out in this process that it still remembers; past it the oldest is forgotten. Default 10,000. */
  maxSignedOut?: number;
  /** How long a session lasts from sign-in. Default 12 hours. */
  ttlMs?: number;
  /** The clock; default Date.now. */
  now?: () => number;
}

export interface SessionStore {
  create(holder: { namespace: string; principal: string }): ConsoleSession;
  get(id: string | undefined): ConsoleSession | undefined;
  delete(id: string): void;
}

/** What a sealed session says it is: nothing else the secret box seals opens as a session. */
const KIND = "rewind.console-session/v1";

const token = (): string => randomBytes(32).toString("base64url");

/** The session a cookie holds, if it is one: undefined for anything else (another value, tampered, another key). */
function openSession(box: SecretBox, id: string): ConsoleSession | undefined {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(box.open(id)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { kind, namespace, principal, csrf, expiresAt } = fields;
  if (kind !== KIND || typeof namespace !== "string" || typeof principal !== "string") return undefined;
  if (typeof csrf !== "string" || typeof expiresAt !== "number") return undefined;
  return { id, namespace, principal, csrf, expiresAt };
}

/**
 * `isHolder`: whether a principal is still one of the API's (its key not removed since the
 * session was made).
 */
export function createSessionStore(
  box: SecretBox,
  isHolder: (principal: string) => boolean,
  options: SessionStoreOptions = {},
): SessionStore {
  const { maxSignedOut = 10_000, ttlMs = 12 * 60 * 60 * 1000, now = Date.now } = options;
  /** Sessions signed out here, by cookie value, with their expiry. */
  const signedOut = new Map<string, number>();
  return {
    create(holder) {
      const csrf = token();
      const expiresAt = now() + ttlMs;
      const id = box.seal(JSON.stringify({ kind: KIND, ...holder, csrf, expiresAt }));
      return { id, ...holder, csrf, expiresAt };
    },
    get(id) {
      if (!id || signedOut.has(id)) return undefined;
      const session = openSession(box, id);
      if (!session || session.expiresAt <= now() || !isHolder(session.principal)) return undefined;
      return session;
    },
    delete(id) {
      const session = openSession(box, id);
      if (!session) return;
      for (const [old, expiresAt] of signedOut) if (expiresAt <= now()) signedOut.delete(old);
      while (signedOut.size >= maxSignedOut) {
        const oldest = signedOut.keys().next();
        if (oldest.done) break;
        signedOut.delete(oldest.value);
      }
      signedOut.set(id, session.expiresAt);
    },
  };
}

/** Whether `given` is the session's form token, compared in constant time. */
export function isSessionToken(session: ConsoleSession, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
