/**
 * The `rewind` command's entry point: parse the command, load the configuration once, and hand
 * over. Errors are one clear sentence on stderr and a non-zero exit code.
 */
import { ConfigError, loadConfig } from "../config.ts";
import { createConsoleLogger } from "./console-logger.ts";
import { runDev } from "./dev-command.ts";
import { startApi } from "./start-api.ts";
import { startWorker } from "./start-worker.ts";

const USAGE = `usage: rewind <command>

commands:
  dev       start the embedded stack: Temporal dev server (unless TEMPORAL_ADDRESS is set), worker and API
  worker    run a Rewind worker against TEMPORAL_ADDRESS
  api       run the HTTP API against TEMPORAL_ADDRESS
`;

function requireAddress(address: string | undefined, command: string): string {
  if (!address) throw new ConfigError(`rewind ${command} needs TEMPORAL_ADDRESS (e.g. 127.0.0.1:7233)`);
  return address;
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfig();
  const logger = createConsoleLogger(config.logLevel, command);
  switch (command) {
    case "dev":
      return runDev(config, logger);
    case "worker": {
      const worker = await startWorker(config, requireAddress(config.temporal.address, "worker"), logger);
      process.once("SIGINT", () => void worker.shutdown());
      process.once("SIGTERM", () => void worker.shutdown());
      logger.info("worker started", { taskQueue: config.temporal.taskQueue });
      return worker.run();
    }
    case "api": {
      const api = await startApi(config, requireAddress(config.temporal.address, "api"), config.temporal.uiUrl, logger);
      process.stdout.write(`Rewind API ${api.url}\n`);
      const stop = () => void api.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      return;
    }
    default:
      throw new ConfigError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  process.stderr.write(`rewind: ${message}\n`);
  process.exitCode = 1;
});
