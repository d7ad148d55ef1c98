/**
 * The replay corpus in CI: every history recorded by every release replays against today's
 * workflow code without nondeterminism, and every recorded run's script, replayed against its
 * cassette in today's sandbox, makes the same calls in the same order with the same arguments
 * and ends the same way. A change that breaks either strands runs left open by a release.
 */
import path from "node:path";
import { Worker } from "@temporalio/worker";
import { describe, expect, it } from "vitest";
import { createConsoleLogger } from "../../src/cli/console-logger.ts";
import { replayCassette } from "../../src/sdk/replay.ts";
import type { Cassette } from "../../src/shared/run.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import { installTemporalRuntime } from "../../src/temporal/temporal-runtime.ts";
import { REPLAY_SINKS } from "../../src/worker/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { HISTORIES_DIR, decodeHistory, loadCorpus } from "./history-file.ts";
import { readdir, readFile } from "node:fs/promises";
import { ExternalStorage, type StorageDriver } from "@temporalio/common";
import { createFileDriver } from "../../src/payloads/file-driver.ts";
import { decodePayload } from "../../src/payloads/payload-bytes.ts";

const corpus = await loadCorpus();

/** The file store's driver over every release's `payloads/` folder (files named by their sha256). */
function corpusPayloads(): StorageDriver {
  const driver = createFileDriver({ dir: "" });
  return {
    name: driver.name,
    type: driver.type,
    store: () => Promise.reject(new Error("the replay corpus is read-only")),
    async retrieve(_context, claims) {
      return Promise.all(
        claims.map(async (claim) => {
          const hash = claim.claimData["sha256"] ?? "";
          for (const release of await readdir(HISTORIES_DIR, { withFileTypes: true })) {
            if (!release.isDirectory()) continue;
            try {
              return decodePayload(await readFile(path.join(HISTORIES_DIR, release.name, "payloads", hash)));
            } catch {
              // Not this release's.
            }
          }
          throw new Error(`payload ${hash} is not in the corpus`);
        }),
      );
    },
  };
}
const FIRST_RELEASE = "3477167";

describe("the replay corpus", () => {
  it("holds the first release's histories of every scenario", () => {
    const first = corpus.filter((c) => c.file.release === FIRST_RELEASE).map((c) => c.file.scenario);
    for (const scenario of [
      "mcp-sequential",
      "mcp-parallel",
      "approval-approved.open",
      "sleep.open",
      "signal-via-webhook.open",
      "child-run-awaited.open",
      "credentials-renewed.open",
      "schema-changed-approved.open",
      "http-fetch",
      "host-tools",
      "continue-as-new",
      "fork",
      "cpu-limit",
      "cancelled-while-parked",
    ]) {
      expect(first, scenario).toContain(scenario);
    }
  });

  it("replays every history against today's workflow code", async () => {
    installTemporalRuntime(createConsoleLogger("error", "temporal-sdk"), "ERROR");
    const workflowBundle = await loadWorkflowBundle(path.join(REPO_ROOT, ".rewind", "cache"));
    const failures: string[] = [];
    let replayed = 0;
    const histories = corpus.map(({ file }) => ({ workflowId: file.workflowId, history: decodeHistory(file.history) }));
    // Large payloads of the recorded runs are kept beside their histories, by content hash.
    const externalStorage = new ExternalStorage({ drivers: [corpusPayloads()] });
    for await (const result of Worker.runReplayHistories(
      { workflowBundle, sinks: REPLAY_SINKS, dataConverter: { externalStorage } },
      histories,
    )) {
      const { name } = corpus[replayed] ?? { name: result.workflowId };
      if (result.error) failures.push(`${name}: ${result.error.message}`);
      replayed += 1;
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(corpus.length);
  }, 300_000);

  it("replays every recorded run's script in today's sandbox with the same calls and ending", async () => {
    const runs = corpus.filter(({ file }) => file.cassette !== undefined && file.outcome !== undefined);
    expect(runs.length).toBeGreaterThan(10);
    for (const { name, file } of runs) {
      // The recorded scripts' steps take milliseconds; the cpu-limit scenario's loops until the
      // limit, which need not be the default two seconds for each of its releases. (200 ms was too
      // little: a cold first step, which builds its isolate, once took more.)
      const outcome = await replayCassette({ cassette: file.cassette as Cassette, cpuMsPerStep: 500 });
      const ended = file.outcome ?? { status: "" };
      if (ended.status === "completed") {
        expect(outcome, name).toEqual({
          ok: true,
          result: ended.result,
          calls: (file.cassette as Cassette).entries.length,
        });
      } else if (ended.error?.includes("nothing will settle")) {
        // A stuck run's script, fed every recorded call, still waits and asks for nothing more.
        expect(outcome, name).toMatchObject({ ok: false, error: { kind: "divergence", expected: null, actual: null } });
      } else if (ended.status === "rolledBack") {
        // A rolled-back run's script, fed the calls it made, asks for nothing more: the entries
        // past them are the rollback's reverts, which the script never made.
        const { entries } = file.cassette as Cassette;
        const firstRevert = entries.find((entry) => entry.revertOf !== undefined);
        expect(outcome, name).toMatchObject({
          ok: false,
          error: { kind: "divergence", seq: firstRevert?.seq ?? entries.length + 1, actual: null },
        });
      } else {
        // A failed run's script fails the same way, after the same calls (a divergence would name a call).
        expect(outcome.ok, name).toBe(false);
        if (!outcome.ok) expect(outcome.error.kind, `${name}: ${outcome.error.message}`).toBe("script");
      }
    }
  }, 300_000);
});
