/**
 * Where the key that seals secrets comes from: REWIND_SECRET_KEY, or — for the embedded stack
 * only — a key generated once and kept in the state dir (mode 0600). In production a missing
 * key is a start-up error, never a silent default, since losing it loses every stored secret.
 * So it is against a cluster (TEMPORAL_ADDRESS): processes on other machines would each generate
 * their own, and one's webhook URLs and sealed credentials would be refused by the others.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError, type Config } from "../config.ts";
import { generateSecretKey } from "./secret-box.ts";

export async function resolveSecretKey(
  config: Pick<Config, "secretKey" | "production" | "stateDir"> & { temporal?: Pick<Config["temporal"], "address"> },
): Promise<Buffer> {
  if (config.secretKey) return config.secretKey;
  if (config.production)
    throw new ConfigError("REWIND_SECRET_KEY is required when NODE_ENV=production (32 bytes, base64)");
  if (config.temporal?.address) {
    throw new ConfigError(
      "REWIND_SECRET_KEY is required with TEMPORAL_ADDRESS: give the API and every worker the same key (32 bytes, base64, e.g. `openssl rand -base64 32`), or webhook URLs and credentials sealed by one process are refused by the others",
    );
  }
  const file = path.join(config.stateDir, "secret.key");
  try {
    const key = Buffer.from((await readFile(file, "utf8")).trim(), "base64");
    if (key.length === 32) return key;
    throw new ConfigError(
      `${file} does not hold a 32-byte base64 key; fix or delete it (deleting loses stored secrets)`,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(config.stateDir, { recursive: true });
  const key = generateSecretKey();
  // "wx": if another process created it first, use theirs.
  try {
    await writeFile(file, key.toString("base64") + "\n", { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return Buffer.from((await readFile(file, "utf8")).trim(), "base64");
  }
}
