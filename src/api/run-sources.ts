/**
 * What is taken out of a run to make something else of it: a saved script (what the run started
 * from and the tools it called), a fork (the parent's toolset, end user, input and finished calls,
 * and its own credentials as its calls now use them) and a cassette (start and every call with its
 * outcome, no credentials). Apart from the reads (run-reads.ts) because each starts from the run's
 * start event (run-lookup.ts `startOf`) and its whole journal, read a page at a time.
 */
import { runtimeVersionOf, type Cassette, type ForkSeed, type RunInput } from "../shared/index.ts";
import { getRunCredentialsQuery } from "../workflows/messages.ts";
import { startOf, withinQueryTimeout, type RunContext } from "./run-lookup.ts";
import { readCalledTools, type CalledTool } from "./run-start.ts";
import { readWholeJournal } from "./worker-query.ts";

/** The run's own credentials as its calls now use them (renewed ones once renewed), sealed. */
export async function readCurrentCredentials({ client }: RunContext, runId: string): Promise<string | undefined> {
  return (
    (await withinQueryTimeout(client.workflow.getHandle(runId).query(getRunCredentialsQuery)))?.sealed ?? undefined
  );
}

/** What saving a run's script needs: what the run started from, and every tool its journal shows it called. */
export async function readScriptSource(
  context: RunContext,
  runId: string,
  namespace: string,
): Promise<{ input: RunInput; called: CalledTool[] }> {
  const input = await startOf(context, runId, namespace);
  return { input, called: await readCalledTools(context.client, runId) };
}

/** What a fork needs of its parent: its toolset, end user, input, own credentials and finished calls. */
export async function readForkSource(
  context: RunContext,
  runId: string,
  namespace: string,
): Promise<{ toolsetId: string; endUser?: string; input: RunInput; seed: ForkSeed }> {
  const input = await startOf(context, runId, namespace);
  const view = await readWholeJournal(context.client, runId);
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

/** The run as a cassette: toolset, script, input and every call with its outcome; no credentials. */
export async function readCassette(context: RunContext, runId: string, namespace: string): Promise<Cassette> {
  const input = await startOf(context, runId, namespace);
  const view = await readWholeJournal(context.client, runId, { withBatches: true });
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
