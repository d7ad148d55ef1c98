/**
 * `npm run example:server`: the tickets MCP server on its own, on the fixed port
 * REWIND_EXAMPLE_PORT (default 8788), so a toolset naming it (examples/cli/toolset.yaml, the
 * harness's) keeps one content-addressed id from one start to the next. Ctrl-C stops it.
 */
import { ConfigError, loadExampleConfig } from "../../src/config.ts";
import { startTicketsServer } from "./tickets-server.ts";

async function main(): Promise<void> {
  const { serverPort } = loadExampleConfig();
  let server;
  try {
    server = await startTicketsServer({ port: serverPort });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new Error(
        `port ${serverPort} is in use (a tickets server already running?); set REWIND_EXAMPLE_PORT to use another`,
      );
    throw error;
  }
  process.stdout.write(`tickets MCP server at ${server.url} (Ctrl-C stops it)\n`);
  const stop = (): void => {
    void server.close().then(() => process.stdout.write("tickets MCP server stopped\n"));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`example server: ${message}\n`);
  process.exitCode = 1;
});
