/**
 * Who is signed in to the console. A person signs in with an API key once; the browser then
 * holds only a random session id in an HttpOnly, SameSite=Strict cookie, and this store maps it
 * to the key's namespace and principal: the key itself is kept nowhere, neither here nor in the
 * browser. Each session has its own token for the forms it posts (CSRF). The store lives in the
 * API's memory, bounded (the oldest session goes first) and expiring, so a restart signs
 * everyone out, which is the price of keeping no secret on disk.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

export interface ConsoleSession {
  id: string;
  namespace: string;
  principal: string;
  /** The token every form of this session posts back. */
  csrf: string;
  expiresAt: number;
}

export interface SessionStoreOptions {
  /** Sessions kept at once; past it the oldest is dropped. Default 1,000. */
  maxSessions?: number;
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

const token = (): string => randomBytes(32).toString("base64url");

export function createSessionStore(options: SessionStoreOptions = {}): SessionStore {
  const { maxSessions = 1000, ttlMs = 12 * 60 * 60 * 1000, now = Date.now } = options;
  const sessions = new Map<string, ConsoleSession>();
  return {
    create(holder) {
      while (sessions.size >= maxSessions) {
        const oldest = sessions.keys().next();
        if (oldest.done) break;
        sessions.delete(oldest.value);
      }
      const session = { id: token(), ...holder, csrf: token(), expiresAt: now() + ttlMs };
      sessions.set(session.id, session);
      return session;
    },
    get(id) {
      if (!id) return undefined;
      const session = sessions.get(id);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        sessions.delete(id);
        return undefined;
      }
      return session;
    },
    delete(id) {
      sessions.delete(id);
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
