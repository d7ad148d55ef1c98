/**
 * The S3 payload store against a real S3-compatible server (moto, started by the helper), then
 * inside Temporal: a client whose External Storage uses the driver keeps a large workflow input in
 * the bucket and writes only a reference into history.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { Client } from "@temporalio/client";
import { connectClient } from "../../src/temporal/index.ts";
import { ExternalStorage, StorageDriverClaim, type Payload, type StorageDriver } from "@temporalio/common";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { encodePayload } from "../../src/payloads/payload-bytes.ts";
import { createS3Driver, defaultS3Client, s3KeyOf } from "../../src/payloads/s3-driver.ts";
import { S3_TEST_CREDENTIALS, S3_TEST_REGION, startS3Server, type S3Server } from "../helpers/s3-server.ts";

const text = (s: string) => new TextEncoder().encode(s);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function jsonPayload(value: unknown): Payload {
  return { metadata: { encoding: text("json/plain") }, data: text(JSON.stringify(value)) };
}

function expectSamePayload(actual: Payload | undefined, expected: Payload): void {
  expect(actual).toBeDefined();
  expect(Object.keys(actual?.metadata ?? {}).sort()).toEqual(Object.keys(expected.metadata ?? {}).sort());
  for (const [name, value] of Object.entries(expected.metadata ?? {})) {
    expect(Buffer.from(actual?.metadata?.[name] ?? []).equals(Buffer.from(value ?? []))).toBe(true);
  }
  expect(Buffer.from(actual?.data ?? []).equals(Buffer.from(expected.data ?? []))).toBe(true);
}

async function keysIn(client: S3Client, bucket: string): Promise<string[]> {
  const listing = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listing.Contents ?? []).map((object) => object.Key ?? "").sort();
}

/** Counts the S3 operations a real client sends, by command name. */
function countCommands(client: S3Client): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counts.set(context.commandName ?? "?", (counts.get(context.commandName ?? "?") ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "rewindTestCounter" },
  );
  return counts;
}

let server: S3Server;
let s3: S3Client;

beforeAll(async () => {
  server = await startS3Server();
  s3 = server.client();
});

afterAll(async () => {
  s3?.destroy();
  await server?.stop();
});

async function newBucket(): Promise<string> {
  return server.createBucket(`rewind-test-${randomUUID().slice(0, 8)}`);
}

describe("S3 payload driver", () => {
  it("stores and retrieves payloads, metadata and 3 MB of binary data included", async () => {
    const bucket = await newBucket();
    const driver = createS3Driver({ bucket, prefix: "payloads", client: s3 });
    expect(driver.name).toBe("rewind-s3");
    expect(driver.type).toBe("rewind.s3");
    const payloads: Payload[] = [
      jsonPayload({ hello: "world" }),
      { metadata: { encoding: text("binary/plain"), messageType: text("x.y.Z") }, data: randomBytes(3 * 1024 * 1024) },
      { metadata: { encoding: text("binary/null") }, data: new Uint8Array() },
      jsonPayload("ünïcødé ✓".repeat(1000)),
    ];
    const claims = await driver.store({}, payloads);
    expect(claims).toHaveLength(payloads.length);
    for (const [index, claim] of claims.entries()) {
      const hash = sha256(encodePayload(payloads[index] as Payload));
      expect(claim.claimData).toEqual({ key: `payloads/${hash}`, sha256: hash });
    }
    expect(await keysIn(s3, bucket)).toEqual(claims.map((claim) => claim.claimData["key"]).sort());

    const retrieved = await driver.retrieve({}, claims);
    expect(retrieved).toHaveLength(payloads.length);
    for (const [index, payload] of payloads.entries()) expectSamePayload(retrieved[index], payload);
  });

  it("stores the same bytes under the same key, writing them again so the object is young", async () => {
    const bucket = await newBucket();
    const client = server.client();
    const counts = countCommands(client);
    try {
      const driver = createS3Driver({ bucket, prefix: "p", client });
      const payload = jsonPayload({ same: "bytes", n: 1 });
      const [first] = await driver.store({}, [payload]);
      const [second] = await driver.store({}, [jsonPayload({ same: "bytes", n: 1 })]);
      expect(second?.claimData).toEqual(first?.claimData);
      expect(counts.get("PutObjectCommand")).toBe(2);
      expect(await keysIn(client, bucket)).toEqual([first?.claimData["key"]]);
      // A driver in another process (a fresh client) finds the object too.
      const [again] = await createS3Driver({ bucket, prefix: "p", client: s3 }).store({}, [payload]);
      expect(again?.claimData).toEqual(first?.claimData);
      expect(await keysIn(client, bucket)).toEqual([first?.claimData["key"]]);
    } finally {
      client.destroy();
    }
  });

  it("fails clearly, naming bucket and key, when an object is missing", async () => {
    const bucket = await newBucket();
    const driver = createS3Driver({ bucket, prefix: "p", client: s3 });
    const hash = sha256(text("never stored"));
    await expect(driver.retrieve({}, [new StorageDriverClaim({ key: `p/${hash}`, sha256: hash })])).rejects.toThrow(
      `payload ${hash} is missing: s3://${bucket}/p/${hash} does not exist`,
    );
    await expect(driver.retrieve({}, [new StorageDriverClaim({ sha256: hash })])).rejects.toThrow(
      /not a rewind S3 reference/,
    );
    await expect(driver.retrieve({}, [new StorageDriverClaim({ key: "p/x", sha256: "x" })])).rejects.toThrow(
      /not a rewind S3 reference/,
    );
  });

  it("refuses an object whose bytes were changed, and a later store replaces it", async () => {
    const bucket = await newBucket();
    const driver = createS3Driver({ bucket, prefix: "p", client: s3 });
    const payload = jsonPayload({ important: "value" });
    const [claim] = await driver.store({}, [payload]);
    const key = claim?.claimData["key"] ?? "";

    // Same length, other bytes.
    const original = encodePayload(payload);
    const flipped = Uint8Array.from(original);
    flipped[flipped.length - 2] = (flipped[flipped.length - 2] ?? 0) ^ 0xff;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: flipped }));
    await expect(driver.retrieve({}, [claim as StorageDriverClaim])).rejects.toThrow(
      `payload ${claim?.claimData["sha256"]} in s3://${bucket}/${key} is corrupt`,
    );

    // Truncated: storing the payload again notices the wrong size and writes it anew.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: original.subarray(0, 5) }));
    await expect(driver.retrieve({}, [claim as StorageDriverClaim])).rejects.toThrow(/is corrupt/);
    await driver.store({}, [payload]);
    expectSamePayload((await driver.retrieve({}, [claim as StorageDriverClaim]))[0], payload);
  });

  it("keeps objects under the prefix, at the top without one, and reads references across prefixes", async () => {
    expect(s3KeyOf("", "abc")).toBe("abc");
    expect(s3KeyOf("a/b", "abc")).toBe("a/b/abc");
    expect(s3KeyOf("/a/b/", "abc")).toBe("a/b/abc");

    const bucket = await newBucket();
    const payload = jsonPayload({ where: "prefixed" });
    const hash = sha256(encodePayload(payload));
    const [nested] = await createS3Driver({ bucket, prefix: "team/rewind", client: s3 }).store({}, [payload]);
    const [top] = await createS3Driver({ bucket, prefix: "", client: s3 }).store({}, [payload]);
    expect(nested?.claimData["key"]).toBe(`team/rewind/${hash}`);
    expect(top?.claimData["key"]).toBe(hash);
    expect(await keysIn(s3, bucket)).toEqual([hash, `team/rewind/${hash}`].sort());

    // A reference names its key: a driver configured with another prefix still reads it.
    const other = createS3Driver({ bucket, prefix: "moved", client: s3 });
    expectSamePayload((await other.retrieve({}, [nested as StorageDriverClaim]))[0], payload);
  });

  it("configures its default client from the AWS environment, path-style for a configured endpoint", async () => {
    const bucket = await newBucket();
    vi.stubEnv("AWS_ENDPOINT_URL_S3", server.endpoint.replace("127.0.0.1", "localhost"));
    vi.stubEnv("AWS_REGION", S3_TEST_REGION);
    vi.stubEnv("AWS_ACCESS_KEY_ID", S3_TEST_CREDENTIALS.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", S3_TEST_CREDENTIALS.secretAccessKey);
    vi.stubEnv("AWS_PROFILE", undefined);
    try {
      expect(defaultS3Client({}).config.forcePathStyle).toBeFalsy();
      const client = defaultS3Client();
      expect(client.config.forcePathStyle).toBe(true);
      client.destroy();
      // No client given: the driver makes the default one.
      const driver = createS3Driver({ bucket, prefix: "env" });
      const payload = jsonPayload({ from: "environment" });
      const [claim] = await driver.store({}, [payload]);
      expectSamePayload((await driver.retrieve({}, [claim as StorageDriverClaim]))[0], payload);
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: claim?.claimData["key"] }));
      expect(sha256((await object.Body?.transformToByteArray()) ?? new Uint8Array())).toBe(claim?.claimData["sha256"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("S3 payload driver in Temporal", () => {
  it("keeps a large workflow input in the bucket and a reference in history", async () => {
    const bucket = await newBucket();
    const driver: StorageDriver = createS3Driver({ bucket, prefix: "runs", client: s3 });
    const externalStorage = new ExternalStorage({ drivers: [driver], payloadSizeThreshold: 1024 });
    const connection = await connectClient({ address: inject("temporalAddress") });
    try {
      const client = new Client({
        connection,
        namespace: inject("temporalNamespace"),
        dataConverter: { externalStorage },
      });
      const large = { blob: randomBytes(64 * 1024).toString("base64") };
      const small = "small";
      // No worker: the workflow only has to be started for its input to reach history.
      const handle = await client.workflow.start("rewindS3DriverTest", {
        taskQueue: `s3-driver-${randomUUID()}`,
        workflowId: `s3-driver-${randomUUID()}`,
        args: [large, small],
      });
      try {
        const history = await handle.fetchHistory();
        const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
        expect(input).toHaveLength(2);
        const [stored, inline] = input as [Payload, Payload];
        expect(isReferencePayload(stored)).toBe(true);
        expect(isReferencePayload(inline)).toBe(false);

        const reference = decodeReferencePayload(stored);
        expect(reference.driverName).toBe("rewind-s3");
        const key = reference.claimData["key"] ?? "";
        expect(key).toBe(`runs/${reference.claimData["sha256"]}`);
        expect(await keysIn(s3, bucket)).toEqual([key]);

        const [resolved] = await driver.retrieve({}, [new StorageDriverClaim(reference.claimData)]);
        expect(client.options.loadedDataConverter.payloadConverter.fromPayload(resolved as Payload)).toEqual(large);
      } finally {
        await handle.terminate("s3 driver test done");
      }
    } finally {
      await connection.close();
    }
  });
});
