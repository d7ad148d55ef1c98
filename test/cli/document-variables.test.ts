/**
 * `${NAME}` and `${NAME:-default}` in a toolset document's values: expanded from the
 * environment the CLI was given, keys left alone, and an unset name without a default refused
 * with where it is.
 */
import { describe, expect, it } from "vitest";
import { expandVariables } from "../../src/cli/commands/document-variables.ts";

const env: Record<string, string> = { PORT: "9788", EMPTY: "", TOKEN_NAME: "scope" };
const lookup = (name: string) => env[name];

describe("toolset document variables", () => {
  it("expands names and defaults in every string value, and nothing else", () => {
    const document = {
      mcpServers: {
        tickets: { url: "http://127.0.0.1:${PORT}/mcp", headers: { "x-${PORT}": "${TOKEN_NAME}-${MISSING:-none}" } },
        other: { url: "http://127.0.0.1:${UNSET:-8788}/mcp" },
      },
      http: { allowedHosts: ["${EMPTY:-fallback}", "${EMPTY}", "$${PORT}", "$PORT", "${not a name}"] },
      policies: { "tickets.create": { approval: true, maxAttempts: 3 } },
    };
    expect(expandVariables(document, lookup, "toolset.yaml")).toEqual({
      mcpServers: {
        tickets: { url: "http://127.0.0.1:9788/mcp", headers: { "x-${PORT}": "scope-none" } },
        other: { url: "http://127.0.0.1:8788/mcp" },
      },
      http: { allowedHosts: ["fallback", "", "${PORT}", "$PORT", "${not a name}"] },
      policies: { "tickets.create": { approval: true, maxAttempts: 3 } },
    });
  });

  it("refuses a name that is not set and has no default, saying where it is", () => {
    const document = { mcpServers: { tickets: { url: "http://127.0.0.1:${TICKETS_PORT}/mcp" } }, list: ["${NOPE}"] };
    expect(() => expandVariables(document, lookup, "toolset.yaml")).toThrow(
      "toolset.yaml: mcpServers.tickets.url: ${TICKETS_PORT} is not set (set it, or give a default: ${TICKETS_PORT:-value})",
    );
    expect(() => expandVariables({ list: ["${NOPE}"] }, lookup, "t.json")).toThrow(
      "t.json: list[0]: ${NOPE} is not set",
    );
  });
});
