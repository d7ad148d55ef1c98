/**
 * The one error the http tool's fetcher throws. Whoever wires the fetcher into an activity turns
 * it into `ToolError(refused)`; the `rule` says which guard fired. Messages name the rule and the
 * host only: never header values, bodies or the underlying error's text, which may echo them.
 */

export type HttpRefusalRule =
  | "url" // the URL (or a redirect's Location) does not parse
  | "scheme" // not http: or https:
  | "userinfo" // user:pass@ in the URL
  | "host" // empty host
  | "notAllowed" // host not in the allow-list
  | "port" // host listed, but not with this port
  | `address:${string}` // an address the host resolved to, e.g. "address:private"
  | "dns" // the name did not resolve
  | "connect" // no connection (nothing was sent)
  | "noResponse" // connected, so the request may have reached the server, but no response headers came
  | "network" // the connection failed while reading the body
  | "redirects" // more redirects than allowed
  | "tooLarge" // decoded body over the limit
  | "encoding" // a content-encoding the fetcher cannot decode
  | "timeout" // the one deadline passed
  | "aborted" // the caller's signal fired
  | "method" // a method outside the supported set
  | "header" // a header name or value that is not allowed
  | "body"; // a body on GET or HEAD

export class HttpRefusal extends Error {
  override name = "HttpRefusal";
  readonly rule: HttpRefusalRule;
  readonly host: string;

  constructor(rule: HttpRefusalRule, host: string, detail?: string) {
    super(
      `http request to ${host === "" ? "(no host)" : host} refused: ${rule}${detail === undefined ? "" : ` (${detail})`}`,
    );
    this.rule = rule;
    this.host = host;
  }
}
