/**
 * Where the harness finds the stack, the way the rest of Rewind does: the API from REWIND_URL and
 * REWIND_API_KEY (as the `rewind` CLI), Temporal from Temporal's standard settings
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, a temporal.toml profile…) as the worker and the SDK read
 * them, and, when none names a cluster, the dev server `npm start` runs from temporal-dev.yml.
 * Flags override each: `--api <url>`, `--temporal <host:port>`; `--yes` answers for the user.
 */
import { fileURLToPath } from "node:url";
import { loadClientConfig, loadExampleConfig, type TemporalSettings } from "../../src/config.ts";
import { loadDevServerConfig } from "../../src/dev/index.ts";
import { temporalSettings } from "../../src/sdk/index.ts";

export const USAGE = `usage: npm run example -- [--api <url>] [--temporal <host:port>] [--yes]

  --api <url>             the Rewind API (default: REWIND_URL, else http://127.0.0.1:8787)
  --temporal <host:port>  Temporal, for the host tool's worker (default: TEMPORAL_ADDRESS or the
                          temporal.toml profile, else the dev server of temporal-dev.yml)
  --yes                   answer the script's question and approve its call without asking

  REWIND_API_KEY is sent to the API; the tickets MCP server listens on REWIND_EXAMPLE_PORT (8788).
`;

export interface HarnessOptions {
  api: { url: string; apiKey: string | undefined };
  /** The Temporal connection, with the address always set. */
  temporal: TemporalSettings & { address: string };
  /** Where the address came from, for the harness's first lines. */
  temporalSource: string;
  /** The tickets MCP server's fixed port. */
  serverPort: number;
  yes: boolean;
}

export class UsageError extends Error {}

function flags(argv: string[]): { api?: string; temporal?: string; yes: boolean } {
  const parsed: { api?: string; temporal?: string; yes: boolean } = { yes: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--yes") parsed.yes = true;
    else if (arg === "--api" || arg === "--temporal") {
      const value = argv[++i];
      if (!value || value.startsWith("--")) throw new UsageError(`${arg} needs a value`);
      parsed[arg === "--api" ? "api" : "temporal"] = value;
    } else throw new UsageError(`unknown argument "${arg ?? ""}"`);
  }
  return parsed;
}

/** The dev server `npm start` runs when no setting names a cluster: temporal-dev.yml's address. */
async function devServerAddress(): Promise<string> {
  const file = fileURLToPath(new URL("../../temporal-dev.yml", import.meta.url));
  const config = await loadDevServerConfig(file);
  const host = config.ip.includes(":") ? `[${config.ip}]` : config.ip;
  return `${host}:${config.port}`;
}

/** `env`: the environment as src/config.ts reads it (by default, this process's). */
export async function harnessOptions(
  argv: string[],
  env?: Record<string, string | undefined>,
): Promise<HarnessOptions> {
  const given = flags(argv);
  const client = loadClientConfig(env);
  const api = { url: (given.api ?? client.url).replace(/\/+$/, ""), apiKey: client.apiKey };
  const settings = temporalSettings(env);
  const { serverPort } = loadExampleConfig(env);
  const base = { api, serverPort, yes: given.yes };
  if (given.temporal)
    return { ...base, temporal: { ...settings, address: given.temporal }, temporalSource: "--temporal" };
  if (settings.address)
    return {
      ...base,
      temporal: { ...settings, address: settings.address },
      temporalSource: "TEMPORAL_ADDRESS or temporal.toml",
    };
  return {
    ...base,
    temporal: { ...settings, address: await devServerAddress() },
    temporalSource: "temporal-dev.yml, the dev server npm start runs",
  };
}
