/**
 * What is made of a run from its start and its whole journal: the source of a fork (the parent's
 * toolset, end user and input, and its finished calls as the fork's seed) and a cassette (start
 * and every call with its outcome, no credentials). Apart from run-service.ts because both read
 * the whole journal a page at a time and reshape it; the service checks first that the run is the
 * caller's and reads what it started from.
 */
import type { Client } from "@temporalio/client";
import { runtimeVersionOf, type Cassette, type ForkSeed, type RunInput } from "../shared/index.ts";
import { readWholeJournal } from "./worker-query.ts";

/** What a fork needs of its parent. */
export interface ForkSource {
  toolsetId: string;
  endUser?: string;
  input: RunInput;
  seed: ForkSeed;
}

/** The fork source of run `runId`, which started from `input`: its finished calls, completed or failed. */
export async function readForkSource(client: Client, runId: string, input: RunInput): Promise<ForkSource> {
  const view = await readWholeJournal(client, runId);
  const calls = view.entries.flatMap((e): ForkSeed["calls"] => {
    if (e.status === "completed")
      return [{ seq: e.seq, tool: e.tool, args: e.args, outcome: { ok: true as const, value: e.result ?? null } }];
    if (e.status === "failed" && e.error)
      return [{ seq: e.seq, tool: e.tool, args: e.args, outcome: { ok: false as const, error: e.error } }];
    return [];
  });
  return {
    toolsetId: input.toolsetId,
    ...(input.endUser ? { endUser: input.endUser } : {}),
    input,
    seed: { parentRunId: runId, calls },
  };
}

/** Run `runId`, which started from `input`, as a cassette, its journal's batches included. */
export async function readCassette(client: Client, runId: string, input: RunInput): Promise<Cassette> {
  const view = await readWholeJournal(client, runId, { withBatches: true });
  return {
    format: "rewind.cassette/1",
    runId,
    toolsetId: input.toolsetId,
    toolset: input.toolset,
    scriptHash: input.scriptHash,
    script: input.script,
    input: input.input,
    startedAt: view.startedAt ?? 0,
    entries: view.entries,
    batches: view.batches ?? [],
    runtimeVersion: runtimeVersionOf(input),
  };
}
