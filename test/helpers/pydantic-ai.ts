/**
 * Pydantic AI, for the interop suite: an agent framework whose MCP client (`MCPToolset`, built on
 * FastMCP's client) many Python agents reach MCP servers with. `pydantic-ai-slim` with its `mcp`
 * extra is pinned, with the FastMCP client that extra resolves to, and installed with pip once
 * into `.rewind/pydantic-ai-venv` (python-venv.ts), a venv of its own because its MCP SDK is
 * whatever FastMCP asks for. `.ci/run` calls this file with `--install` before the tests, so the
 * one-time pip install (15 to 45 s here) is its own step and not a timed-out test hook.
 *
 * Usage: node test/helpers/pydantic-ai.ts --install
 */
import path from "node:path";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";

export const PYDANTIC_AI_VERSION = "2.78.0";
export const FASTMCP_SLIM_VERSION = "4.2.3";
const VENV = path.join(REPO_ROOT, ".rewind", "pydantic-ai-venv");

/** Installs Pydantic AI unless it is there; returns the venv's python. */
export async function ensurePydanticAi(log: (line: string) => void = () => {}): Promise<string> {
  return ensureVenv({
    name: "pydantic-ai",
    venvDir: VENV,
    requirements: [`pydantic-ai-slim[mcp]==${PYDANTIC_AI_VERSION}`, `fastmcp-slim==${FASTMCP_SLIM_VERSION}`],
    // Importing pydantic_ai takes some 3 CPU-s: the probe finds the package and reads the versions pip recorded.
    probe:
      "import importlib.metadata as m, importlib.util as u; assert u.find_spec('pydantic_ai'); print(m.version('pydantic-ai-slim'), m.version('fastmcp-slim'))",
    expectedVersion: `${PYDANTIC_AI_VERSION} ${FASTMCP_SLIM_VERSION}`,
    log,
  });
}

if (import.meta.main && process.argv.includes("--install")) {
  const started = Date.now();
  ensurePydanticAi(console.log).then(
    () =>
      console.log(
        `pydantic-ai-slim ${PYDANTIC_AI_VERSION} (fastmcp-slim ${FASTMCP_SLIM_VERSION}) ready (${Math.round((Date.now() - started) / 1000)} s)`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
