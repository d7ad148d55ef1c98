/**
 * The embedded stack's payload store: Temporal's External Storage driver that keeps each large
 * payload as a content-addressed file (`<dir>/<sha256 prefix>/<sha256>`). A payload is written
 * to a temporary file, flushed to disk and renamed into place before its reference is returned,
 * so a reference that reached history always names a file that exists; writing the same bytes
 * again only sets the file's mtime to now. Nothing here deletes a file: `rewind payloads prune`
 * (src/payloads/prune.ts) does, and keeps files younger than its cut-off, which is why storing
 * bytes that are already there must make the file young again: its new reference is not in
 * history yet.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename, rm, utimes } from "node:fs/promises";
import path from "node:path";
import { StorageDriverClaim, type Payload, type StorageDriver } from "@temporalio/common";
import { decodePayload, encodePayload } from "./payload-bytes.ts";

export const FILE_DRIVER_TYPE = "rewind.file";

export interface FileDriverOptions {
  /** Directory the payloads live in (created when missing). */
  dir: string;
  /** Routing name written into references; keep it stable across releases. Default `rewind-file`. */
  name?: string;
}

const HASH = /^[0-9a-f]{64}$/;

/** The file of the payload whose bytes hash to `hash`. */
export function payloadFileOf(dir: string, hash: string): string {
  return path.join(dir, hash.slice(0, 2), hash);
}

/** True when `file` exists, which now has the current time as its mtime (see above). */
async function refresh(file: string): Promise<boolean> {
  try {
    const now = new Date();
    await utimes(file, now, now);
    return true;
  } catch {
    return false;
  }
}

async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${randomUUID()}.tmp`);
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  // The rename itself must survive a crash too.
  const directory = await open(dir, "r");
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

export function createFileDriver(options: FileDriverOptions): StorageDriver {
  const fileOf = (hash: string) => payloadFileOf(options.dir, hash);
  return {
    name: options.name ?? "rewind-file",
    type: FILE_DRIVER_TYPE,
    async store(_context, payloads: Payload[]) {
      return Promise.all(
        payloads.map(async (payload) => {
          const bytes = encodePayload(payload);
          const hash = createHash("sha256").update(bytes).digest("hex");
          const file = fileOf(hash);
          if (!(await refresh(file))) await writeDurably(file, bytes);
          return new StorageDriverClaim({ sha256: hash });
        }),
      );
    },
    async retrieve(_context, claims) {
      return Promise.all(
        claims.map(async (claim) => {
          const hash = claim.claimData["sha256"] ?? "";
          if (!HASH.test(hash))
            throw new Error(`payload reference ${JSON.stringify(claim.claimData)} is not a rewind file reference`);
          let bytes: Buffer;
          try {
            bytes = await readFile(fileOf(hash));
          } catch (error) {
            throw new Error(
              `payload ${hash} is missing from ${options.dir}: ${error instanceof Error ? error.message : String(error)}`,
            );
          }
          if (createHash("sha256").update(bytes).digest("hex") !== hash)
            throw new Error(`payload ${hash} in ${options.dir} is corrupt`);
          return decodePayload(bytes);
        }),
      );
    },
  };
}
