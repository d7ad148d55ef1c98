/**
 * Global setup of the cluster checks: reads the settings of the cluster scripts/temporal-cluster.sh
 * started (`.rewind/cluster-checks.json`, written by its `test` command), prepares the checks'
 * namespace with `rewind setup` as an operator would, and hands the settings (and the `temporal`
 * CLI) to the files. A
 * missing file is a sentence saying how to run the checks, not a stack trace.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { findOrInstallTemporalCli } from "../../src/dev/index.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..");
const SETTINGS = resolve(REPO_ROOT, ".rewind", "cluster-checks.json");

interface ClusterChecks {
  address: string;
  namespace: string;
  restartCommand: string[];
  logs: string;
}

async function readSettings(): Promise<ClusterChecks> {
  const text = await readFile(SETTINGS, "utf8").catch(() => {
    throw new Error(
      `${SETTINGS} is missing: the cluster checks run against the cluster of scripts/temporal-cluster.sh; run them with \`npm run test:cluster\``,
    );
  });
  return JSON.parse(text) as ClusterChecks;
}

export default async function setup(project: TestProject): Promise<void> {
  const cluster = await readSettings();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", resolve(REPO_ROOT, "src/cli/main.ts"), "setup"],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env["PATH"] ?? "",
        TEMPORAL_ADDRESS: cluster.address,
        TEMPORAL_NAMESPACE: cluster.namespace,
      },
    },
  );
  console.log(
    `[cluster] ${cluster.address}, namespace ${cluster.namespace}: ${stdout.trim().split("\n").at(-1) ?? ""}`,
  );
  project.provide("clusterAddress", cluster.address);
  project.provide("clusterNamespace", cluster.namespace);
  project.provide("clusterRestartCommand", cluster.restartCommand);
  project.provide("clusterLogs", cluster.logs);
  // The `temporal` CLI an operator runs the guide's `temporal …` commands with.
  const cliPath = await findOrInstallTemporalCli({ stateDir: resolve(REPO_ROOT, ".rewind"), log: console.log });
  project.provide("temporalCliPath", cliPath);
}
