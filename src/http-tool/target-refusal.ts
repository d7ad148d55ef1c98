/**
 * What the outbound target policy throws for a URL it will not dial. The message names the
 * target as the tenant gave it (its origin) and says only that it is not allowed: the refusal
 * comes before any socket is opened, so nothing in it depends on what listens there. Whoever
 * catches it keeps it that way: `reason` is `targetNotAllowed`, never a connection error.
 */
export class TargetRefusal extends Error {
  override name = "TargetRefusal";
  readonly reason = "targetNotAllowed";
  /** Read by the MCP layer's connect-phase test: nothing left this process. */
  readonly code = "ERR_TARGET_NOT_ALLOWED";
  /** The URL's origin, or a placeholder when it has none. */
  readonly target: string;

  constructor(target: string) {
    super(
      `${target} is not an allowed target: Rewind connects to public addresses only, and to the targets its operator trusts`,
    );
    this.target = target;
  }
}

/** The origin of an http(s) URL, for messages; userinfo, path and query are left out. */
export function targetOf(url: string | URL): string {
  const parsed = typeof url === "string" ? (URL.canParse(url) ? new URL(url) : undefined) : url;
  if (!parsed) return "(an invalid URL)";
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : `(a ${parsed.protocol} URL)`;
}

/** The refusal, when `error` is one or was caused by one (SDKs wrap what their fetch threw). */
export function targetRefusalIn(error: unknown): TargetRefusal | undefined {
  let current = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (current instanceof TargetRefusal) return current;
    current = current.cause;
  }
  return undefined;
}
