/**
 * The payload store's configuration and the file store itself: REWIND_PAYLOAD_STORE and
 * REWIND_PAYLOAD_THRESHOLD are read with clear errors, and the file driver stores payloads
 * content-addressed and durably, answers them byte for byte, and refuses missing or corrupt ones.
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { createFileDriver } from "../../src/payloads/file-driver.ts";

const load = (env: Record<string, string>) => loadConfig({ REWIND_STATE_DIR: "/srv/rewind", ...env }, "/home/app");
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("payload store configuration", () => {
  it("defaults to files under the state dir and a 256 KiB threshold", () => {
    expect(load({}).payloads).toEqual({
      store: { kind: "file", dir: "/srv/rewind/payloads" },
      thresholdBytes: 262_144,
    });
  });

  it("takes file: paths (relative to the working directory) and s3:// buckets with prefixes", () => {
    expect(load({ REWIND_PAYLOAD_STORE: "file:data/payloads" }).payloads.store).toEqual({
      kind: "file",
      dir: "/home/app/data/payloads",
    });
    expect(load({ REWIND_PAYLOAD_STORE: "file:///var/payloads" }).payloads.store).toEqual({
      kind: "file",
      dir: "/var/payloads",
    });
    expect(load({ REWIND_PAYLOAD_STORE: "s3://my-bucket/rewind/prod/" }).payloads.store).toEqual({
      kind: "s3",
      bucket: "my-bucket",
      prefix: "rewind/prod",
    });
    expect(load({ REWIND_PAYLOAD_STORE: "s3://my-bucket" }).payloads.store).toEqual({
      kind: "s3",
      bucket: "my-bucket",
      prefix: "",
    });
    expect(load({ REWIND_PAYLOAD_THRESHOLD: "65536" }).payloads.thresholdBytes).toBe(65_536);
  });

  it("refuses what it can't use, naming the variable", () => {
    expect(() => load({ REWIND_PAYLOAD_STORE: "ftp://x" })).toThrow(ConfigError);
    expect(() => load({ REWIND_PAYLOAD_STORE: "ftp://x" })).toThrow(
      /REWIND_PAYLOAD_STORE must be file:<directory> or s3:\/\/<bucket>/,
    );
    expect(() => load({ REWIND_PAYLOAD_STORE: "file:" })).toThrow(/needs a directory/);
    expect(() => load({ REWIND_PAYLOAD_STORE: "s3://UPPER_case" })).toThrow(/REWIND_PAYLOAD_STORE/);
    // Over Temporal's 2 MiB payload limit, a threshold would let payloads through that the server refuses.
    expect(() => load({ REWIND_PAYLOAD_THRESHOLD: String(3 * 1024 * 1024) })).toThrow(
      /REWIND_PAYLOAD_THRESHOLD must be an integer between 1024 and 2097152/,
    );
  });
});

describe("the file store", () => {
  it("stores payloads content-addressed, once, and answers them byte for byte", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rewind-payloads-"));
    dirs.push(dir);
    const driver = createFileDriver({ dir });
    const big = {
      metadata: { encoding: new TextEncoder().encode("binary/plain") },
      data: new Uint8Array(3_000_000).map((_, i) => (i * 31) % 256),
    };
    const small = {
      metadata: { encoding: new TextEncoder().encode("json/plain") },
      data: new TextEncoder().encode('{"a":1}'),
    };
    const claims = await driver.store({}, [big, small, big]);
    expect(claims[0]?.claimData).toEqual(claims[2]?.claimData);
    expect(claims[0]?.claimData["sha256"]).toMatch(/^[0-9a-f]{64}$/);
    const files = (await readdir(dir, { recursive: true })).filter((f) => !f.includes(".tmp") && f.includes(path.sep));
    expect(files).toHaveLength(2);
    const [back, backSmall] = await driver.retrieve({}, [claims[0]!, claims[1]!]);
    expect(Buffer.from(back?.data ?? []).equals(Buffer.from(big.data))).toBe(true);
    expect(new TextDecoder().decode(back?.metadata?.["encoding"] ?? new Uint8Array())).toBe("binary/plain");
    expect(new TextDecoder().decode(backSmall?.data ?? new Uint8Array())).toBe('{"a":1}');
  });

  it("refuses a missing or corrupt payload, and a reference that is not its own", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rewind-payloads-"));
    dirs.push(dir);
    const driver = createFileDriver({ dir });
    const [claim] = await driver.store({}, [{ metadata: {}, data: new TextEncoder().encode("hello") }]);
    const hash = claim?.claimData["sha256"] ?? "";
    await writeFile(path.join(dir, hash.slice(0, 2), hash), "tampered");
    await expect(driver.retrieve({}, [claim!])).rejects.toThrow(/is corrupt/);
    await expect(driver.retrieve({}, [{ claimData: { sha256: "0".repeat(64) } }])).rejects.toThrow(/is missing from/);
    await expect(driver.retrieve({}, [{ claimData: { sha256: "../../etc/passwd" } }])).rejects.toThrow(
      /not a rewind file reference/,
    );
  });
});
