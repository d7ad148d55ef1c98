/**
 * Talking to Temporal: connections (TLS, API key, envconfig profiles), the SDK's process-wide
 * runtime, and making sure a namespace and its search attributes are ready.
 */
export {
  connectClient,
  connectNative,
  connectionSettings,
  describeTransport,
  type TemporalTls,
  type TemporalConnectionSettings,
} from "./connection.ts";
export { waitForCluster, ClusterWaitTimeoutError, type ClusterWaitOptions } from "./cluster-wait.ts";
export { clusterSilence } from "./cluster-silence.ts";
export { lazyConnectionWithRetriesEndingBeforeClose } from "./retries-end-before-close.ts";
export { readTemporalProfile, TemporalProfileError } from "./envconfig.ts";
export { requireNamespaceReady } from "./namespace-readiness.ts";
export { setupNamespace } from "./namespace-setup.ts";
export {
  temporalSdkMetricsUrl,
  installTemporalRuntimeWithMetrics,
  installTemporalRuntime,
} from "./temporal-runtime.ts";
export {
  temporalCallFailure,
  temporalAnswers,
  isTemporalUnreachable,
  type TemporalCallFailure,
} from "./unreachable.ts";
