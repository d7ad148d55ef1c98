/**
 * A call refused with stored credentials waits for them where they are written: the run tells
 * the toolset's credentials workflow (and its base's) the revisions the call was refused with,
 * and that workflow signals the run on the next write to the scope, or at once if one came since
 * (see toolset-credentials.ts). A run's own credentials need none of this: they are renewed by a
 * signal to the run itself.
 */
import { proxyLocalActivities, workflowInfo } from "@temporalio/workflow";
import type { CredentialRef, CredentialRevisions } from "../../shared/index.ts";
import type { Activities } from "../../activities/index.ts";
import type { ParkDetails, ParkReason } from "./parking.ts";

const { awaitCredentials } = proxyLocalActivities<Activities>({ startToCloseTimeout: "10 seconds" });

/** Whether a call parked for `reason` waits on stored credentials (not the run's own). */
export function waitsOnStoredCredentials(reason: ParkReason, details: ParkDetails): boolean {
  return (reason === "credentialsExpired" || reason === "insufficientScope") && details.scope !== "run";
}

export async function awaitCredentialsWrite(
  ref: CredentialRef,
  scope: ParkDetails["scope"],
  seen: CredentialRevisions,
): Promise<void> {
  await awaitCredentials({
    namespace: ref.namespace,
    toolsetId: ref.toolsetId,
    ...(ref.baseToolsetId === undefined ? {} : { baseToolsetId: ref.baseToolsetId }),
    wait: {
      runId: workflowInfo().workflowId,
      scope: scope === "run" ? null : (scope ?? null),
      ...(ref.endUser === undefined ? {} : { endUser: ref.endUser }),
    },
    seen,
  });
}
