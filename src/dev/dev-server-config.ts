/**
 * `temporal-dev.yml` → a typed DevServerConfig → `temporal server start-dev` flags. The file is
 * the one place a user tunes the embedded Temporal server (ports, SQLite file, search attributes,
 * raised payload limits), so a mistake in it must fail at startup with the field's name rather
 * than as a confusing flag error from the CLI.
 */

import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const SEARCH_ATTRIBUTE_TYPES = ["Text", "Keyword", "Int", "Double", "Bool", "Datetime", "KeywordList"] as const;
const LOG_LEVELS = ["debug", "info", "warn", "error", "never"] as const;

const port = z.int().min(1).max(65535);
const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const dynamicConfigKey = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

const schema = z.strictObject({
  namespace: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be a namespace name")
    .default("default"),
  ip: z.string().min(1).default("127.0.0.1"),
  port: port.default(7233),
  uiPort: port.default(8233),
  dbFile: z.string().min(1).default(".rewind/temporal.sqlite"),
  logLevel: z.enum(LOG_LEVELS).default("warn"),
  searchAttributes: z
    .record(z.string().regex(identifier, "must be an identifier"), z.enum(SEARCH_ATTRIBUTE_TYPES))
    .default({}),
  dynamicConfig: z.record(z.string().regex(dynamicConfigKey, "must be a dotted identifier"), z.json()).default({}),
});

export type SearchAttributeType = (typeof SEARCH_ATTRIBUTE_TYPES)[number];
export type DevServerLogLevel = (typeof LOG_LEVELS)[number];

/** The validated contents of `temporal-dev.yml`; every field has a default. */
export interface DevServerConfig {
  /** Namespace Rewind uses; created at launch. Default `default` (always exists). */
  namespace: string;
  /** Address the frontend and UI bind. Default `127.0.0.1`. */
  ip: string;
  /** Frontend gRPC port. Default 7233. */
  port: number;
  /** Web UI port. Default 8233. */
  uiPort: number;
  /** SQLite file, absolute once loaded (relative paths resolve against the YAML file's folder). */
  dbFile: string;
  /** Server log level. Default `warn`. */
  logLevel: DevServerLogLevel;
  /** Search attributes registered at launch, name → type. */
  searchAttributes: Record<string, SearchAttributeType>;
  /** Dynamic config overrides, key → JSON value (e.g. `limit.blobSize.error: 10485760`). */
  dynamicConfig: Record<string, unknown>;
}

/** What one launch uses on top of the file: tests pick free ports, no UI and no SQLite file. */
export interface DevServerLaunch {
  port: number;
  /** `false` starts the server headless (no Web UI). */
  uiPort: number | false;
  /** `undefined` keeps all state in memory. */
  dbFile: string | undefined;
  /** The Web UI's remote codec (Rewind's `<api>/v1/codec`), so it shows stored payloads; ignored headless. */
  codecEndpoint?: string | undefined;
}

export interface ParseDevServerConfigOptions {
  /** Named in error messages, e.g. the file's path. */
  source: string;
  /** Folder that a relative `dbFile` is resolved against. */
  baseDir: string;
}

/** Parses and validates YAML text; throws an Error naming each bad field. */
export function parseDevServerConfig(text: string, options: ParseDevServerConfigOptions): DevServerConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    throw new Error(`${options.source}: not valid YAML: ${(error as Error).message}`, { cause: error });
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  - ${formatPath(issue.path)}: ${describeIssue(issue)}`);
    throw new Error(`${options.source} is invalid:\n${lines.join("\n")}`);
  }
  return { ...result.data, dbFile: resolve(options.baseDir, result.data.dbFile) };
}

/** Reads and validates a `temporal-dev.yml` file. */
export async function loadDevServerConfig(file: string): Promise<DevServerConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read the dev server config ${file}: ${(error as Error).message}`, { cause: error });
  }
  return parseDevServerConfig(text, { source: file, baseDir: dirname(resolve(file)) });
}

/**
 * The arguments after `temporal` for `server start-dev`.
 *
 * @example
 * startDevArgs(config, { port: 7233, uiPort: false, dbFile: undefined })
 * // ["server", "start-dev", "--ip", "127.0.0.1", "--port", "7233", "--headless", ...]
 */
export function startDevArgs(config: DevServerConfig, launch: DevServerLaunch): string[] {
  const args = ["server", "start-dev", "--ip", config.ip, "--port", String(launch.port)];
  if (launch.uiPort === false) args.push("--headless");
  else {
    args.push("--ui-port", String(launch.uiPort));
    if (launch.codecEndpoint !== undefined) args.push("--ui-codec-endpoint", launch.codecEndpoint);
  }
  if (launch.dbFile !== undefined) args.push("--db-filename", launch.dbFile);
  if (config.namespace !== "default") args.push("--namespace", config.namespace);
  for (const [name, type] of Object.entries(config.searchAttributes)) {
    args.push("--search-attribute", `${name}=${type}`);
  }
  for (const [key, value] of Object.entries(config.dynamicConfig)) {
    args.push("--dynamic-config-value", `${key}=${JSON.stringify(value)}`);
  }
  args.push("--log-level", config.logLevel);
  return args;
}

/** Record-key issues wrap the real reason ("must be an identifier") one level down. */
function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_key") return `invalid name: ${issue.issues.map((inner) => inner.message).join("; ")}`;
  return issue.message;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(top level)";
  return path
    .map((part, i) => {
      const text = String(part);
      if (typeof part === "number") return `[${text}]`;
      const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(text);
      return plain ? (i === 0 ? text : `.${text}`) : `[${JSON.stringify(text)}]`;
    })
    .join("");
}
