/**
 * Writing credentials: a toolset's (`PUT /v1/toolsets/{id}/credentials`) and an end user's for a
 * toolset (`PUT /v1/end-users/{user}/toolsets/{id}/credentials`). Values are sealed here, before
 * they reach Temporal, and never returned. Each write wakes the runs parked on that scope's
 * expired credentials, so their calls are sent again: the credentials workflow itself signals the
 * runs that told it they wait (toolset-credentials.ts), and the runs parked before runs told it
 * are found through search attributes.
 */
import { Router } from "express";
import { WithStartWorkflowOperation, type Client } from "@temporalio/client";
import type { SecretBox } from "../../credentials/index.ts";
import {
  CREDENTIALS_WORKFLOW_TYPE,
  credentialsWorkflowId,
  type CredentialScope,
  RUN_WORKFLOW_TYPE,
  SEARCH_ATTRIBUTES,
} from "../../shared/index.ts";
import { TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import type { ResolvedToolset, ToolsetRegistry } from "../../toolsets/index.ts";
import { credentialsRenewedSignal, setCredentialsUpdate } from "../../workflows/messages.ts";
import { temporalCallFailure } from "../../temporal/index.ts";
import { namespaceOf } from "../auth.ts";
import { HttpError, notFound } from "../http-error.ts";
import { quoteVisibility } from "../run-list.ts";
import { credentialsBody, endUserName, type CredentialsBody } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface CredentialsRouteDeps {
  client: Client;
  taskQueue: string;
  box: SecretBox;
  toolsets: ToolsetRegistry;
}

/** Credentials may name only the toolset's MCP servers. */
export function checkServers(body: CredentialsBody, toolset: ResolvedToolset): void {
  const unknown = Object.keys(body.mcpServers).find((name) => !toolset.document.mcpServers[name]);
  if (unknown)
    throw new HttpError(400, "badRequest", `credentials: "${unknown}" is not an MCP server of toolset ${toolset.id}`);
}

export interface CredentialWriter {
  /** Validates, seals and stores one scope's credentials, then wakes the runs parked on it. */
  write(
    namespace: string,
    toolsetId: string | undefined,
    endUser: string | undefined,
    raw: unknown,
  ): Promise<{ resumedRuns: number }>;
}

export function createCredentialWriter(deps: CredentialsRouteDeps): CredentialWriter {
  async function write(
    namespace: string,
    toolsetId: string | undefined,
    endUser: string | undefined,
    raw: unknown,
  ): Promise<{ resumedRuns: number }> {
    if (!toolsetId || !TOOLSET_ID_PATTERN.test(toolsetId)) throw notFound(`toolset ${toolsetId ?? ""}`);
    const toolset = await deps.toolsets.get(toolsetId, namespace);
    if (!toolset) throw notFound(`toolset ${toolsetId}`);
    const body = parseOrThrow(credentialsBody, raw, "body");
    checkServers(body, toolset);
    const sealed = deps.box.seal(JSON.stringify(body));
    const { revision, woken = [] } = await deps.client.workflow.executeUpdateWithStart(setCredentialsUpdate, {
      args: [{ sealed, ...(endUser !== undefined ? { endUser } : {}) }],
      startWorkflowOperation: new WithStartWorkflowOperation(CREDENTIALS_WORKFLOW_TYPE, {
        workflowId: credentialsWorkflowId(namespace, toolsetId),
        taskQueue: deps.taskQueue,
        args: [{ endUsers: {}, revision: 0 }],
        workflowIdConflictPolicy: "USE_EXISTING",
      }),
    });
    const listed = await wakeParkedRuns(namespace, toolsetId, endUser, revision, new Set(woken));
    return { resumedRuns: woken.length + listed };
  }

  /**
   * Runs parked on this scope that the credentials workflow did not wake (`alreadyWoken`) are found by
   * search attributes, never by a scan of all runs: the namespace's parked runs, of this toolset
   * or of one derived from it (whose runs fall back on its base's credentials), told which toolset
   * was written. A run parked too recently to be listed told the credentials workflow it waits,
   * unless it started before runs did; a run told twice resumes its calls once.
   */
  async function wakeParkedRuns(
    namespace: string,
    toolsetId: string,
    endUser: string | undefined,
    revision: number,
    alreadyWoken: ReadonlySet<string>,
  ): Promise<number> {
    const scope: CredentialScope = endUser === undefined ? "toolset" : "endUser";
    const clauses = [
      `WorkflowType = ${quoteVisibility(RUN_WORKFLOW_TYPE)}`,
      `ExecutionStatus = 'Running'`,
      `${SEARCH_ATTRIBUTES.namespace.name} = ${quoteVisibility(namespace)}`,
      `${SEARCH_ATTRIBUTES.status.name} = 'parked'`,
      ...(endUser === undefined ? [] : [`${SEARCH_ATTRIBUTES.endUser.name} = ${quoteVisibility(endUser)}`]),
    ];
    const derivesFrom = new Map<string, boolean>();
    const isDerived = async (id: string): Promise<boolean> => {
      let known = derivesFrom.get(id);
      if (known === undefined) {
        const toolset = await deps.toolsets.get(id, namespace).catch((error: unknown) => {
          if (temporalCallFailure(error)) throw error;
          return undefined;
        });
        known = toolset?.document.base === toolsetId;
        derivesFrom.set(id, known);
      }
      return known;
    };
    let woken = 0;
    for await (const run of deps.client.workflow.list({ query: clauses.join(" AND ") })) {
      const runToolset = run.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset);
      if (runToolset === undefined || alreadyWoken.has(run.workflowId)) continue;
      const own = runToolset === toolsetId;
      if (!own && !(await isDerived(runToolset))) continue;
      const renewed = { scope, revision, ...(endUser !== undefined ? { endUser } : {}), ...(own ? {} : { toolsetId }) };
      await deps.client.workflow
        .getHandle(run.workflowId)
        .signal(credentialsRenewedSignal, renewed)
        .catch((error: unknown) => {
          // A run that ended since it was listed needs no waking; Temporal gone is the request's failure.
          if (temporalCallFailure(error)) throw error;
        });
      woken += 1;
    }
    return woken;
  }

  return { write };
}

export function createCredentialsRouter(writer: CredentialWriter): Router {
  const router = Router();
  const { write } = writer;

  router.put("/v1/toolsets/:id/credentials", async function setToolsetCredentials(req, res) {
    res.json(await write(namespaceOf(req), req.params.id, undefined, req.body));
  });

  router.put("/v1/end-users/:user/toolsets/:id/credentials", async function setEndUserCredentials(req, res) {
    const user = parseOrThrow(endUserName, req.params.user ?? "", "path");
    res.json(await write(namespaceOf(req), req.params.id, user, req.body));
  });

  return router;
}
