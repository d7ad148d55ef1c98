/**
 * Payloads outside history: the data converter with External Storage (file or S3 driver), its
 * metrics, and pruning what no open run refers to.
 */
export {
  createExternalStorage,
  createStorageDriver,
  rewindDataConverter,
  fromHistoryPayload,
} from "./external-storage.ts";
export { measuredDriver } from "./measured-driver.ts";
export { prunePayloads } from "./prune.ts";
export { storeListing } from "./store-listing.ts";
