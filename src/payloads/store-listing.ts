/**
 * What pruning needs of a payload store and the drivers do not offer: list what is stored (each
 * payload's hash, size and when it was last written) and delete one payload. One implementation
 * for the file store (walks `<dir>/<2 hex>/<sha256>`, mtime) and one for the S3 store
 * (ListObjectsV2 under the prefix, LastModified, DeleteObject), both with the drivers' layout.
 *
 * A delete names the cut-off it was decided against and checks it again first: a payload written
 * (or, for the file store, stored again, which refreshes its mtime) since it was listed is younger
 * than the cut-off now and is kept.
 */
import { lstat, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import {
  DeleteObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3ServiceException,
  type S3Client,
} from "@aws-sdk/client-s3";
import type { PayloadStoreConfig } from "../config.ts";
import { payloadFileOf } from "./file-driver.ts";
import { defaultS3Client, s3KeyOf } from "./s3-driver.ts";

export interface StoredPayload {
  /** The SHA-256 of the payload's bytes: the `sha256` of the claims that reference it. */
  hash: string;
  /** Where it is: a file path or an `s3://bucket/key` URL, for messages. */
  location: string;
  size: number;
  /** When it was last written. */
  modifiedAt: Date;
}

export interface PayloadStoreListing {
  /** The store, for messages: a directory or `s3://bucket/prefix`. */
  readonly description: string;
  list(): AsyncIterable<StoredPayload>;
  /**
   * Deletes the payload unless it was written after `cutoff` (checked again now). Answers true
   * when it deleted it, false when it kept it or the payload was already gone.
   */
  delete(payload: StoredPayload, cutoff: Date): Promise<boolean>;
}

const HASH = /^[0-9a-f]{64}$/;
const SHARD = /^[0-9a-f]{2}$/;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/** Payloads of the file store: `<dir>/<first 2 hex>/<sha256>`; temporary files of writes in progress are not listed. */
export function fileStoreListing(dir: string): PayloadStoreListing {
  async function entries(where: string): Promise<string[]> {
    try {
      return await readdir(where);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }
  return {
    description: dir,
    async *list() {
      for (const shard of (await entries(dir)).sort()) {
        if (!SHARD.test(shard)) continue;
        for (const name of (await entries(path.join(dir, shard))).sort()) {
          if (!HASH.test(name) || !name.startsWith(shard)) continue;
          const file = path.join(dir, shard, name);
          let info;
          try {
            info = await lstat(file);
          } catch (error) {
            if (isMissing(error)) continue;
            throw error;
          }
          if (!info.isFile()) continue;
          yield { hash: name, location: file, size: info.size, modifiedAt: info.mtime };
        }
      }
    },
    async delete(payload, cutoff) {
      const file = payloadFileOf(dir, payload.hash);
      try {
        if ((await lstat(file)).mtime > cutoff) return false;
        await unlink(file);
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Objects of the S3 store: `<prefix>/<sha256>`; other keys under the prefix are not listed. */
export function s3StoreListing(options: { bucket: string; prefix: string; client: S3Client }): PayloadStoreListing {
  const { bucket, client } = options;
  const prefix = options.prefix.replace(/^\/+|\/+$/g, "");
  const listPrefix = prefix === "" ? "" : `${prefix}/`;
  return {
    description: `s3://${bucket}/${prefix}`,
    async *list() {
      let token: string | undefined;
      do {
        let page;
        try {
          page = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: listPrefix, ContinuationToken: token }),
          );
        } catch (error) {
          throw new Error(`listing s3://${bucket}/${listPrefix}: ${describe(error)}`, { cause: error });
        }
        for (const object of page.Contents ?? []) {
          const key = object.Key ?? "";
          const name = key.slice(listPrefix.length);
          // Only `<prefix>/<sha256>` itself: not deeper keys, nor another prefix's objects.
          if (!HASH.test(name) || object.LastModified === undefined) continue;
          yield {
            hash: name,
            location: `s3://${bucket}/${key}`,
            size: object.Size ?? 0,
            modifiedAt: object.LastModified,
          };
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async delete(payload, cutoff) {
      const key = s3KeyOf(prefix, payload.hash);
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        if (head.LastModified === undefined || head.LastModified > cutoff) return false;
      } catch (error) {
        if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return false;
        throw new Error(`checking s3://${bucket}/${key}: ${describe(error)}`, { cause: error });
      }
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        throw new Error(`deleting s3://${bucket}/${key}: ${describe(error)}`, { cause: error });
      }
      return true;
    },
  };
}

/** The listing of the configured store; an S3 store uses `s3Client`, else the driver's default client. */
export function storeListing(store: PayloadStoreConfig, s3Client?: S3Client): PayloadStoreListing {
  if (store.kind === "file") return fileStoreListing(store.dir);
  return s3StoreListing({ bucket: store.bucket, prefix: store.prefix, client: s3Client ?? defaultS3Client() });
}
