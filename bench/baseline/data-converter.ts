/**
 * The baseline's data converter: Temporal's External Storage with Rewind's file driver on the
 * baseline's own directory and the same threshold as Rewind's, so payloads over it leave the
 * plain workflow's history exactly as they leave Rewind's. Its worker and every client that
 * starts its workflows or reads their results use it.
 */
import { ExternalStorage, type DataConverter } from "@temporalio/common";
import { createFileDriver } from "../../src/payloads/file-driver.ts";

export function plainDataConverter(dir: string, thresholdBytes: number): DataConverter {
  return {
    externalStorage: new ExternalStorage({
      drivers: [createFileDriver({ dir })],
      payloadSizeThreshold: thresholdBytes,
    }),
  };
}
