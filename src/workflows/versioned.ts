/**
 * The workflow bundle's entry for workers of a Worker Deployment version. Runs are pinned (or
 * auto-upgrade) as configured, but the record workflows (toolsets, namespace settings,
 * credentials, stored scripts) never end: pinned, they would keep their version from
 * ever draining. Here they auto-upgrade, moving to the current version at their next task, and
 * their code is patched like a run's. Unversioned workers load `index.ts` instead: the server
 * refuses a versioning behaviour from a worker that is not versioned.
 */
import { setWorkflowOptions } from "@temporalio/workflow";
import { namespaceSettings } from "./records/namespace-settings.ts";
import { toolsetCredentials } from "./records/toolset-credentials.ts";
import { toolsetRecord } from "./records/toolset-record.ts";
import { workflowScriptRecord } from "./records/stored-script-record.ts";

export * from "./index.ts";

const autoUpgrade = { versioningBehavior: "AUTO_UPGRADE" } as const;
setWorkflowOptions(autoUpgrade, toolsetRecord);
setWorkflowOptions(autoUpgrade, namespaceSettings);
setWorkflowOptions(autoUpgrade, toolsetCredentials);
setWorkflowOptions(autoUpgrade, workflowScriptRecord);
