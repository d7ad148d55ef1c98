/**
 * A payload store driver that counts what passes through it (payloads and their bytes, written
 * and read) for the metrics, and otherwise is the driver it wraps: same name and type, so the
 * references it writes are the wrapped driver's and every process reads them with or without it.
 */
import type { Payload, StorageDriver } from "@temporalio/common";
import type { PayloadMetrics } from "../metrics/index.ts";

/** A payload's data and metadata values: the bytes it takes in the store, near enough. */
function sizeOf(payloads: Payload[]): number {
  let bytes = 0;
  for (const payload of payloads) {
    bytes += payload.data?.byteLength ?? 0;
    for (const value of Object.values(payload.metadata ?? {})) bytes += value?.byteLength ?? 0;
  }
  return bytes;
}

export function measuredDriver(driver: StorageDriver, metrics: PayloadMetrics): StorageDriver {
  return {
    name: driver.name,
    type: driver.type,
    async store(context, payloads) {
      const claims = await driver.store(context, payloads);
      metrics.payloads("store", payloads.length, sizeOf(payloads));
      return claims;
    },
    async retrieve(context, claims) {
      const payloads = await driver.retrieve(context, claims);
      metrics.payloads("retrieve", payloads.length, sizeOf(payloads));
      return payloads;
    },
  };
}
