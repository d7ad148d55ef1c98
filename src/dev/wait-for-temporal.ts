/**
 * Deciding when a freshly spawned Temporal server is usable. An open port is not enough: the
 * frontend accepts connections before the namespace exists, so we poll `DescribeNamespace` over a
 * real client connection until it answers, and stop early if the server process dies.
 */

import type { Connection } from "@temporalio/client";
import { setTimeout as sleep } from "node:timers/promises";
import { connectClient } from "../temporal/index.ts";

export interface WaitForTemporalOptions {
  address: string;
  namespace: string;
  /** Give up after this many milliseconds. */
  timeoutMs: number;
  /** Resolves if the server process exits; waiting stops at once with that reason. */
  exited: Promise<string>;
}

/** Resolves when `namespace` can be described at `address`; rejects with the reason otherwise. */
export async function waitForTemporal(options: WaitForTemporalOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let exitReason: string | undefined;
  void options.exited.then((reason) => {
    exitReason = reason;
  });
  let lastError = "no attempt made";
  while (Date.now() < deadline) {
    if (exitReason !== undefined) throw new Error(`the server exited before it was ready: ${exitReason}`);
    const attempt = await Promise.race([
      describeOnce(options.address, options.namespace),
      options.exited.then(() => "exited"),
    ]);
    if (attempt === true) return;
    if (exitReason !== undefined) throw new Error(`the server exited before it was ready: ${exitReason}`);
    lastError = attempt;
    await sleep(200);
  }
  throw new Error(
    `the server did not answer at ${options.address} within ${options.timeoutMs} ms (last error: ${lastError})`,
  );
}

/** One connection attempt: true on success, else the error text. */
async function describeOnce(address: string, namespace: string): Promise<true | string> {
  let connection: Connection | undefined;
  try {
    connection = await connectClient({ address }, 2_000);
    const ready = connection;
    await ready.withDeadline(Date.now() + 2_000, () => ready.workflowService.describeNamespace({ namespace }));
    return true;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await connection?.close().catch(() => undefined);
  }
}
