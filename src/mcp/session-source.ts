/**
 * Where the pool gets a new MCP session for a run: the one seam the session accelerators plug
 * into. The durable core opens the session when the run's first call needs it
 * (`openOnDemand`); an accelerator may hand over one it opened ahead (spare-sessions.ts), and must
 * fall back to opening one whenever what it kept is not fit. Nothing a run records depends on
 * which source gave its session: a session nobody has used is the same whoever opened it.
 */
import type { McpConnection } from "./mcp-client.ts";

/** What the pool asks a source for: a session for a run that has none for this server yet. */
export interface SessionRequest {
  /**
   * Names the namespace, server and credentials a session opened ahead would have to match
   * (`McpCallRequest.spareKey`); undefined when the run must get a session of its own.
   */
  spareKey: string | undefined;
  /** Opens a new session now. */
  open: () => Promise<McpConnection>;
  /** Checks the server's target again for this run (a guarded target policy); rejects to refuse what was opened ahead. */
  vet?: () => Promise<void>;
}

export interface SessionSource {
  /** A session for the run: one opened ahead if the source has a fit one, else `request.open()`. */
  take(request: SessionRequest): Promise<McpConnection>;
  /** The server forgot a session of this key's (it restarted): whatever was opened ahead for it is no good either. */
  discard(spareKey: string): void;
  /** Sessions opened ahead and kept now. */
  readonly size: number;
  /** Closes what was opened ahead; takes nothing ahead afterwards. */
  close(): Promise<void>;
}

/** The core's source: every new session is opened when the run asks for it. */
export const openOnDemand: SessionSource = {
  take: ({ open }) => open(),
  discard: () => undefined,
  size: 0,
  close: () => Promise.resolve(),
};
