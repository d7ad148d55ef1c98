/**
 * Rewind's data converter: Temporal's default converters plus External Storage, so every
 * payload over the threshold (a tool result, a run's input or result, a journal carried across
 * continue-as-new, a signal, an update) is kept in the payload store and history holds a small
 * reference. Every Temporal client and worker Rewind makes uses this one converter, so whatever
 * one of them wrote, the others can read.
 */
import type { DataConverter, LoadedDataConverter, Payload, StorageDriver } from "@temporalio/common";
import { ExternalStorage } from "@temporalio/common";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import type { PayloadsConfig } from "../config.ts";
import { createFileDriver } from "./file-driver.ts";
import { createS3Driver } from "./s3-driver.ts";

export function createStorageDriver(config: PayloadsConfig): StorageDriver {
  const { store } = config;
  return store.kind === "file"
    ? createFileDriver({ dir: store.dir })
    : createS3Driver({ bucket: store.bucket, prefix: store.prefix });
}

export function createExternalStorage(
  config: PayloadsConfig,
  driver: StorageDriver = createStorageDriver(config),
): ExternalStorage {
  return new ExternalStorage({ drivers: [driver], payloadSizeThreshold: config.thresholdBytes });
}

/** The data converter of every client and worker Rewind makes. */
export function rewindDataConverter(storage: ExternalStorage): DataConverter {
  return { externalStorage: storage };
}

/** A payload read from history as it was before it was stored: references are fetched from the store. */
export async function resolvePayload(converter: LoadedDataConverter, payload: Payload): Promise<Payload> {
  if (!isReferencePayload(payload)) return payload;
  const reference = decodeReferencePayload(payload);
  const driver = converter.externalStorage?.getDriver(reference.driverName);
  if (!driver)
    throw new Error(
      `a payload is kept by the payload store "${reference.driverName}", which this process is not configured with`,
    );
  const [resolved] = await driver.retrieve({}, [{ claimData: reference.claimData }]);
  if (!resolved) throw new Error(`the payload store "${reference.driverName}" returned nothing for a reference`);
  return resolved;
}

/** Decodes a payload read straight from history (a workflow's start input, say), fetching it first if stored. */
export async function fromHistoryPayload<T>(converter: LoadedDataConverter, payload: Payload): Promise<T> {
  return converter.payloadConverter.fromPayload<T>(await resolvePayload(converter, payload));
}
