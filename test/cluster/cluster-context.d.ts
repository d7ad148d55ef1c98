/**
 * What the cluster checks' global setup (cluster-global-setup.ts) hands their files through
 * `inject(...)`, typed so a file cannot ask for a key the setup never provides.
 */

export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the self-hosted cluster's frontend. */
    clusterAddress: string;
    /** The namespace `rewind setup` prepared there for the checks. */
    clusterNamespace: string;
    /** The command that restarts the cluster's services on their database (`temporal-cluster.sh restart`). */
    clusterRestartCommand: string[];
    /** Where the services' logs are, for a failure's message. */
    clusterLogs: string;
  }
}
