/**
 * Deletes stored payloads that no run can read any more. The payload store (External Storage)
 * keeps every payload over the threshold for good; history holds only references to them. A
 * payload may go when both hold:
 *
 * - no execution that can still be read references it: every open execution of the namespace,
 *   and every execution that closed after the cut-off, are walked (their whole histories, every
 *   page, plus an open execution's pending activities), and every reference payload found
 *   anywhere in them keeps its claim's payload;
 * - it was written before the cut-off (`olderThanMs` ago; by default the namespace's retention
 *   period, after which Temporal deletes a closed run's history anyway).
 *
 * Why the age check is needed on top of the references: a payload is written to the store before
 * its reference enters history (the driver stores it while the worker or client serializes the
 * activity result, workflow input or signal, and only then sends it to the server), and Temporal's
 * visibility lists a new execution a moment after it started. A payload whose reference is still
 * on its way is therefore in no history this walk can see, but it was written just now: anything
 * younger than the cut-off is kept. The cut-off is taken before the walk starts, so whatever is
 * written during the walk is younger than it; the file store sets a payload's mtime again when the
 * same bytes are stored again, so a new reference to old bytes makes them young too (the S3 driver
 * does not yet: it skips the PUT of an object that exists, so its LastModified stays that of the
 * first write, and a new reference to bytes stored long ago is protected only once it is in
 * history). Each delete checks the payload's age once more just before it deletes.
 *
 * Why closed executions count: a payload's age is when it was written, not when the runs that
 * reference it closed. A run that fetched a result 40 days ago and closed yesterday still shows its
 * result for a whole retention period after yesterday. With the cut-off at the retention period,
 * every execution Temporal still keeps is walked; a shorter `--older-than` gives up the payloads of
 * runs that closed before it, which is what the operator asked for.
 */
import type { Client } from "@temporalio/client";
import type { Payload } from "@temporalio/common";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { tsToMs } from "@temporalio/common/lib/time.js";
import type { PayloadStoreListing } from "./store-listing.ts";

export interface PruneOptions {
  /** A Temporal client of the namespace whose runs use the store. */
  client: Client;
  /** The payload store, listed and deleted from. */
  storage: PayloadStoreListing;
  /** Payloads written less than this long ago are kept. Default: the namespace's retention period. */
  olderThanMs?: number;
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
  /** Histories fetched at once. Default 4. */
  concurrency?: number;
  /** The clock, for tests. */
  now?: () => number;
}

export interface PruneResult {
  /** Stored payloads left in place: referenced, or younger than the cut-off. */
  kept: number;
  /** Payloads deleted (with dryRun: that would have been). */
  deleted: number;
  bytesDeleted: number;
  /** Distinct payloads referenced by the executions walked. */
  referenced: number;
  /** Executions whose histories were walked. */
  executions: number;
  /** The cut-off: payloads written after it were kept. */
  cutoff: string;
  olderThanMs: number;
  dryRun: boolean;
}

/** The namespace's retention period, in milliseconds. */
export async function namespaceRetentionMs(client: Client): Promise<number> {
  const namespace = client.options.namespace;
  const answer = await client.workflowService.describeNamespace({ namespace });
  const ttl = answer.config?.workflowExecutionRetentionTtl;
  if (!ttl) throw new Error(`namespace ${namespace} has no retention period; pass an age (--older-than) instead`);
  return tsToMs(ttl);
}

function isBytes(value: object): boolean {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

/**
 * Calls `found` with the sha256 of every reference payload anywhere in `root` (a history page, a
 * describe answer): any object with `metadata` and `data` fields that is a reference, so no event
 * type or field is missed, including ones Temporal adds later.
 */
export function collectReferences(root: unknown, found: (hash: string) => void): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== "object" || isBytes(value)) continue;
    if ("metadata" in value && "data" in value && isReferencePayload(value as Payload)) {
      const hash = decodeReferencePayload(value as Payload).claimData["sha256"];
      if (hash) found(hash);
      continue;
    }
    if (Array.isArray(value)) stack.push(...(value as unknown[]));
    else stack.push(...Object.values(value));
  }
}

interface Execution {
  workflowId: string;
  runId: string;
  open: boolean;
}

async function referencesOf(client: Client, execution: Execution, found: (hash: string) => void): Promise<void> {
  const namespace = client.options.namespace;
  const target = { workflowId: execution.workflowId, runId: execution.runId };
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: target,
      nextPageToken,
    });
    collectReferences(page.history, found);
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
  // Heartbeat details and last failures of pending activities are not in history yet.
  if (execution.open)
    collectReferences(await client.workflowService.describeWorkflowExecution({ namespace, execution: target }), found);
}

/** Runs `work` on every item with at most `limit` at once; the first error stops and is thrown. */
async function eachLimited<T>(items: AsyncIterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for await (const item of items) {
    if (failure) break;
    const task: Promise<void> = work(item)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(task));
    running.add(task);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw failure.error;
}

/** The sha256 of every payload referenced by an open execution or one closed after `cutoff`. */
async function referencedPayloads(
  client: Client,
  cutoff: Date,
  concurrency: number,
): Promise<{ hashes: Set<string>; executions: number }> {
  const hashes = new Set<string>();
  const seen = new Set<string>();
  const found = (hash: string) => hashes.add(hash);
  // Open ones first: an execution that closes between the two lists is in the first as open, or
  // in the second as closed after the cut-off (taken before either list), never in neither.
  const queries = [
    { query: "ExecutionStatus = 'Running'", open: true },
    { query: `ExecutionStatus != 'Running' AND CloseTime > '${cutoff.toISOString()}'`, open: false },
  ];
  for (const { query, open } of queries) {
    async function* executions(): AsyncIterable<Execution> {
      for await (const info of client.workflow.list({ query })) {
        const key = `${info.workflowId}/${info.runId}`;
        if (seen.has(key)) continue;
        seen.add(key);
        yield { workflowId: info.workflowId, runId: info.runId, open };
      }
    }
    await eachLimited(executions(), concurrency, async (execution) => {
      try {
        await referencesOf(client, execution, found);
      } catch (error) {
        // An execution whose history is gone (retention) references nothing any more.
        if ((error as { code?: number } | undefined)?.code === 5 /* NOT_FOUND */) return;
        throw new Error(
          `reading the history of ${execution.workflowId} (run ${execution.runId}): ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    });
  }
  return { hashes, executions: seen.size };
}

export async function prunePayloads(options: PruneOptions): Promise<PruneResult> {
  const now = options.now ?? Date.now;
  const olderThanMs = options.olderThanMs ?? (await namespaceRetentionMs(options.client));
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0)
    throw new Error(`olderThanMs must be a non-negative number, got ${olderThanMs}`);
  const dryRun = options.dryRun ?? false;
  // Taken before anything is read: whatever is written from here on is younger than the cut-off.
  const cutoff = new Date(now() - olderThanMs);
  const { hashes, executions } = await referencedPayloads(options.client, cutoff, options.concurrency ?? 4);
  const result: PruneResult = {
    kept: 0,
    deleted: 0,
    bytesDeleted: 0,
    referenced: hashes.size,
    executions,
    cutoff: cutoff.toISOString(),
    olderThanMs,
    dryRun,
  };
  for await (const payload of options.storage.list()) {
    const prunable = !hashes.has(payload.hash) && payload.modifiedAt <= cutoff;
    if (prunable && (dryRun || (await options.storage.delete(payload, cutoff)))) {
      result.deleted++;
      result.bytesDeleted += payload.size;
    } else {
      result.kept++;
    }
  }
  return result;
}
