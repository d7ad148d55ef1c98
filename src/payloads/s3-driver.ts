/**
 * The payload store for deployments whose workers and API run on more than one machine: Temporal's
 * External Storage driver that keeps each large payload as a content-addressed object in an S3
 * bucket (REWIND_PAYLOAD_STORE=s3://<bucket>/<prefix>), where the embedded stack's file driver
 * would need a disk every process shares. Same contract as the file driver: the object key is
 * `<prefix>/<sha256 of the payload's bytes>`, the object is written before its reference is
 * returned (a PutObject that succeeded is durable), storing the same bytes again rewrites the
 * same object (its age restarts, so pruning spares an object a new reference is about to name),
 * and a payload read back is checked against its hash, so a missing or altered object is an
 * error naming the bucket and key instead of a wrong payload. Nothing here deletes an object.
 *
 * The client is deliberately the SDK's default (`new S3Client({})`): region, credentials and
 * endpoint come from the standard AWS variables and files (AWS_REGION, AWS_PROFILE, instance and
 * container roles, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, ~/.aws/config), so an operator
 * configures Rewind's bucket the way they configure any other AWS tool, and Rewind holds no
 * secrets of its own. When the endpoint is set through the environment (an S3-compatible server:
 * MinIO, Ceph, moto, R2…) the client addresses buckets by path (`<endpoint>/<bucket>/<key>`)
 * rather than by host name (`<bucket>.<endpoint host>`): such servers rarely have a wildcard DNS
 * name for every bucket (`bucket.minio:9000` does not resolve), while all of them serve the path
 * form. Against AWS itself the SDK's default (virtual-hosted) addressing is kept.
 */
import { createHash } from "node:crypto";
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { StorageDriverClaim, type Payload, type StorageDriver } from "@temporalio/common";
import { decodePayload, encodePayload } from "./payload-bytes.ts";

export const S3_DRIVER_TYPE = "rewind.s3";

export interface S3DriverOptions {
  bucket: string;
  /** Key prefix, without leading or trailing slashes ("" keeps objects at the bucket's top). */
  prefix: string;
  /** The client to use; default: the SDK's, configured from the environment (see above). */
  client?: S3Client;
}

const HASH = /^[0-9a-f]{64}$/;

/** The client Rewind makes when none is given: the SDK's defaults, path-style for a configured endpoint. */
export function defaultS3Client(env: NodeJS.ProcessEnv = process.env): S3Client {
  const ignored = (env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] ?? "").toLowerCase() === "true";
  const endpointConfigured = !ignored && Boolean(env["AWS_ENDPOINT_URL_S3"] || env["AWS_ENDPOINT_URL"]);
  return new S3Client(endpointConfigured ? { forcePathStyle: true } : {});
}

/** The object key of a payload whose bytes hash to `hash`. */
export function s3KeyOf(prefix: string, hash: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? hash : `${trimmed}/${hash}`;
}

function statusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export function createS3Driver(options: S3DriverOptions): StorageDriver {
  const { bucket } = options;
  const client = options.client ?? defaultS3Client();
  const where = (key: string) => `s3://${bucket}/${key}`;

  return {
    name: "rewind-s3",
    type: S3_DRIVER_TYPE,
    async store(context, payloads: Payload[]) {
      return Promise.all(
        payloads.map(async (payload) => {
          const bytes = encodePayload(payload);
          const hash = createHash("sha256").update(bytes).digest("hex");
          const key = s3KeyOf(options.prefix, hash);
          // Stored again even when present: the write makes the object young, so pruning (which
          // spares objects younger than its cut-off) never removes one a new reference is about to name.
          {
            try {
              await client.send(
                new PutObjectCommand({
                  Bucket: bucket,
                  Key: key,
                  Body: bytes,
                  ContentLength: bytes.length,
                  ContentType: "application/octet-stream",
                }),
                { abortSignal: context.abortSignal },
              );
            } catch (error) {
              throw new Error(`storing payload ${where(key)}: ${describe(error)}`, { cause: error });
            }
          }
          return new StorageDriverClaim({ key, sha256: hash });
        }),
      );
    },
    async retrieve(context, claims) {
      return Promise.all(
        claims.map(async (claim) => {
          const { key, sha256: hash } = claim.claimData;
          if (key === undefined || key === "" || hash === undefined || !HASH.test(hash)) {
            throw new Error(`payload reference ${JSON.stringify(claim.claimData)} is not a rewind S3 reference`);
          }
          let bytes: Uint8Array;
          try {
            const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
              abortSignal: context.abortSignal,
            });
            if (object.Body === undefined) throw new Error("the response has no body");
            bytes = await object.Body.transformToByteArray();
          } catch (error) {
            if (statusOf(error) === 404)
              throw new Error(`payload ${hash} is missing: ${where(key)} does not exist (${describe(error)})`, {
                cause: error,
              });
            throw new Error(`reading payload ${hash} from ${where(key)}: ${describe(error)}`, { cause: error });
          }
          const actual = createHash("sha256").update(bytes).digest("hex");
          if (actual !== hash)
            throw new Error(`payload ${hash} in ${where(key)} is corrupt: its ${bytes.length} bytes hash to ${actual}`);
          return decodePayload(bytes);
        }),
      );
    },
  };
}
