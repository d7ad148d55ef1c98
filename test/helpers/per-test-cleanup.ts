/**
 * What a test made that must go when it ends, whatever its outcome: MCP servers, pools,
 * connections. Call once at a test file's top level; it registers its own `afterEach`.
 */
import { afterEach } from "vitest";
import { startMcpServer, type StartMcpServerOptions, type TestMcpServer } from "./mcp-test-server.ts";

export interface PerTestCleanup {
  /** Runs `cleanup` after the current test (all of a test's cleanups run together). */
  defer(cleanup: () => Promise<void>): void;
  /** Starts a test MCP server that is closed after the current test. */
  mcpServer(options: StartMcpServerOptions): Promise<TestMcpServer>;
}

export function perTestCleanup(): PerTestCleanup {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  const defer = (cleanup: () => Promise<void>): void => {
    cleanups.push(cleanup);
  };
  return {
    defer,
    async mcpServer(options) {
      const server = await startMcpServer(options);
      defer(() => server.close());
      return server;
    },
  };
}
