/**
 * The entry point of the packaged `rewind` command (packages/cli): the client commands, which talk
 * to a running API over HTTP. Rewind itself (the embedded stack, a worker, the API) runs from the
 * repository's sources, so the package does not carry it; asked for one of those commands, this
 * says where it runs instead of failing on a module it lacks.
 */
import { CLIENT_COMMANDS, CLIENT_USAGE, namesApi, runClientCommand } from "./client-commands.ts";
import { SERVER_COMMANDS } from "./server-usage.ts";

const SERVER_NAMES = [...SERVER_COMMANDS].join(", ");

const USAGE = `usage: rewind <command>

talking to a running API:
${CLIENT_USAGE}
  Rewind itself (${SERVER_NAMES}) runs from its repository: \`npm start\` there starts the
  embedded stack, and \`./bin/rewind.js <command>\` runs any of these commands.
`;

async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (CLIENT_COMMANDS.has(command) || namesApi(command)) return runClientCommand(argv);
  if (SERVER_COMMANDS.has(command)) {
    process.stderr.write(
      `rewind: "${command}" runs Rewind itself, from its repository (\`npm start\` there starts the embedded stack, \`./bin/rewind.js ${command}\` runs this command); this rewind talks to a running API (rewind --help)\n`,
    );
    return 1;
  }
  process.stderr.write(`rewind: unknown command "${command}" (rewind --help lists the commands)\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`rewind: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
