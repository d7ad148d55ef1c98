/**
 * Follows a run the harness started until it ends: polls the API, says how to approve a call
 * parked for approval (or approves it itself with --yes), and answers the run's last state.
 * Stopping the harness aborts the wait with the signal's AbortError.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_API_URL } from "../../src/config.ts";
import type { ApiClient } from "../../src/sdk/index.ts";

type RunState = Awaited<ReturnType<ApiClient["getRun"]>>;

export interface FollowOptions {
  api: ApiClient;
  id: string;
  /** Approve parked calls without waiting for someone to. */
  approve: boolean;
  signal: AbortSignal;
}

const POLL_MS = 300;

export async function followRun({ api, id, approve, signal }: FollowOptions): Promise<RunState> {
  const announced = new Set<number>();
  // The command names the API this harness talks to, unless it is the one the CLI assumes.
  const rewind = api.url === DEFAULT_API_URL ? "npx rewind" : `npx rewind --url ${api.url}`;
  for (;;) {
    signal.throwIfAborted();
    const state = await api.getRun(id);
    if (state.status !== "running" && state.status !== "parked") return state;
    for (const call of state.parked ?? []) {
      if (call.reason !== "approval" || announced.has(call.seq)) continue;
      announced.add(call.seq);
      console.log(`\nparked: call ${call.seq} ${call.tool}(${JSON.stringify(call.args)}) waits for approval`);
      console.log(`  approve from another terminal: ${rewind} runs approve ${id} ${call.seq}`);
      console.log(`  (or: curl -X POST ${api.url}/v1/runs/${id}/calls/${call.seq}/approve)`);
      console.log("  waiting for the approval…");
      if (approve) {
        await api.approveCall(id, call.seq, "npm run example -- --yes");
        console.log("  approved by --yes");
      }
    }
    await sleep(POLL_MS, undefined, { signal });
  }
}
