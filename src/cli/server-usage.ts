/**
 * The commands that run Rewind itself (the embedded stack, a worker, the API, a cluster's set-up
 * and upkeep), as opposed to the client commands that talk to a running API. They run from the
 * repository's sources; the packaged CLI (packages/cli) names them only to say where they run.
 */
export const SERVER_COMMANDS: ReadonlySet<string> = new Set(["dev", "setup", "worker", "api", "payloads"]);

export const SERVER_USAGE = `  dev       start the embedded stack: Temporal dev server (unless TEMPORAL_ADDRESS is set), worker and API
  setup [--retention 30d]
            create the namespace (TEMPORAL_NAMESPACE) on TEMPORAL_ADDRESS if missing and register
            Rewind's search attributes, or print what to do where the cluster refuses (Temporal Cloud)
  worker    run a Rewind worker against TEMPORAL_ADDRESS
  api       run the HTTP API against TEMPORAL_ADDRESS
  payloads prune [--older-than 30d] [--dry-run]
            delete stored payloads written before the cut-off (default: the namespace's
            retention period) that no open run, nor one closed since, refers to
`;
