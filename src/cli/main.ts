/**
 * The `rewind` command's entry point: parse the command, load the configuration once, and hand
 * over. Errors are one clear sentence on stderr and a non-zero exit code. The server commands'
 * modules (worker, Temporal, isolated-vm) are imported only when one of them runs, so the
 * client commands start in a fraction of the time.
 */
import { ConfigError, loadConfig } from "../config.ts";
import { asksForHelp, usageEntries } from "./args.ts";
import { CLIENT_COMMANDS, CLIENT_USAGE, namesApi, runClientCommand } from "./client-commands.ts";
import { createConsoleLogger } from "./console-logger.ts";
import { stopWhenParentDies } from "./stop-signals.ts";
import { SERVER_COMMANDS, SERVER_USAGE } from "./server-usage.ts";

const USAGE = `usage: rewind <command>

commands:
${SERVER_USAGE}
talking to a running API:
${CLIENT_USAGE}`;

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
  if (CLIENT_COMMANDS.has(command) || namesApi(command)) {
    process.exitCode = await runClientCommand(argv);
    return;
  }
  if (!SERVER_COMMANDS.has(command)) {
    process.stderr.write(`rewind: unknown command "${command}"\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (asksForHelp(argv.slice(1))) {
    process.stdout.write(`usage:\n${usageEntries(SERVER_USAGE, command)}\n`);
    return;
  }
  const config = loadConfig();
  const logger = createConsoleLogger(config.logLevel, command);
  switch (command) {
    case "dev": {
      const { runDev } = await import("./dev-command.ts");
      return runDev(config, logger);
    }
    case "setup": {
      const { runSetupCommand } = await import("./commands/setup.ts");
      process.exitCode = await runSetupCommand(argv.slice(1), config);
      return;
    }
    case "worker": {
      const { runWorker } = await import("./worker-command.ts");
      return runWorker(config, requireAddress(config.temporal.address, "worker"), logger);
    }
    case "api": {
      const { runApi } = await import("./api-command.ts");
      return runApi(config, requireAddress(config.temporal.address, "api"), logger);
    }
    case "payloads": {
      const { runPayloadsCommand } = await import("./commands/payloads.ts");
      process.exitCode = await runPayloadsCommand(argv.slice(1), config);
      return;
    }
  }
}

stopWhenParentDies();
main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  process.stderr.write(`rewind: ${message}\n`);
  process.exitCode = 1;
  // A command that failed ends: what it left behind (a connection attempt still retrying, for one)
  // gets a second to close, not the power to keep the process alive.
  setTimeout(() => process.exit(), 1_000).unref();
});
