/**
 * The chaos suite on the self-hosted cluster (scripts/temporal-cluster.sh: PostgreSQL, four
 * service processes, 4 history shards), with two Rewind workers on one task queue: the bounded
 * round of test/chaos/chaos.test.ts, where the server restart is a restart of the cluster's four
 * services on their database. Every fault must hit a run still going and every promise must hold.
 * The round shares the namespace with a workflow it did not start, which it must leave alone, and
 * leaves nothing open on its own task queue.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { Client } from "@temporalio/client";
import { describe, expect, inject, it } from "vitest";
import { connectClient } from "../../src/temporal/index.ts";
import { runChaos } from "../chaos/chaos-driver.ts";
import { expectEveryPromiseKept } from "../chaos/promises-kept.ts";

const RUNS = 12;
const LONG_RUNS = 5;
const KILLS = 6;
const WORKERS = 2;

describe("chaos on the self-hosted cluster", () => {
  it("keeps every promise through worker kills, a restart of the cluster's services and an MCP outage (2 worker processes)", async () => {
    const [command = "false", ...args] = inject("clusterRestartCommand");
    const address = inject("clusterAddress");
    const namespace = inject("clusterNamespace");
    const client = new Client({ connection: await connectClient({ address }), namespace });
    // Another user's workflow in the same namespace, on a queue no worker polls: it must stay as it is.
    const bystander = await client.workflow.start("someoneElsesWorkflow", {
      taskQueue: `bystander-${randomUUID()}`,
      workflowId: `bystander-${randomUUID()}`,
    });
    try {
      const report = await runChaos({
        temporal: {
          cluster: {
            env: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
            restart: async () => {
              await promisify(execFile)(command, args);
            },
          },
        },
        runs: RUNS,
        longRuns: LONG_RUNS,
        workers: WORKERS,
        kills: KILLS,
        longRunCalls: { min: 20, max: 50 },
        restartServer: true,
        mcpOutageMs: 3_000,
        deadlineMs: 360_000,
        stuckAfterMs: 60_000,
        log: (line) => process.stderr.write(`[cluster chaos ${WORKERS}w] ${line}\n`),
      });
      process.stderr.write(`[cluster chaos ${WORKERS}w] ${JSON.stringify(report)}\n`);
      expect(report.temporal).toBe(address);
      expectEveryPromiseKept(report, { runs: RUNS, workers: WORKERS, kills: KILLS });
      // The round's records (its toolset, its namespace's settings) were ended; nothing of it is open.
      expect(report.terminatedAtEnd).toBeGreaterThanOrEqual(2);
      const open = await client.workflow.count(`TaskQueue = '${report.taskQueue}' AND ExecutionStatus = 'Running'`);
      expect(open.count).toBe(0);
      const { status } = await bystander.describe();
      expect(status.name, "a workflow the round did not start is left alone").toBe("RUNNING");
    } finally {
      await bystander.terminate("the cluster chaos check is over").catch(() => undefined);
      await client.connection.close();
    }
  });
});
