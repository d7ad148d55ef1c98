/**
 * Where a namespace's events go: `PUT /v1/events/endpoint {url, secret?}` stores the endpoint
 * in the namespace's settings workflow with the signing secret sealed; without a secret one is
 * generated and returned once. `GET` shows the URL, never the secret. With API keys set, the URL
 * must pass the outbound target policy (422 `targetNotAllowed` otherwise, the same whatever
 * listens there); the worker checks it again at each delivery, so a DNS answer that turns
 * private later is refused then.
 */
import { Router } from "express";
import { WithStartWorkflowOperation, type Client } from "@temporalio/client";
import type { SecretBox } from "../../credentials/index.ts";
import { generateWebhookSecret } from "../../events/index.ts";
import { TargetRefusal, type TargetPolicy } from "../../http-tool/index.ts";
import { NAMESPACE_SETTINGS_WORKFLOW_TYPE, namespaceSettingsWorkflowId } from "../../shared/index.ts";
import { getNamespaceSettingsQuery, setEventsEndpointUpdate } from "../../workflows/messages.ts";
import { namespaceOf } from "../auth.ts";
import { HttpError, notFound } from "../http-error.ts";
import { eventsEndpointBody } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface EventsRouteDeps {
  client: Client;
  taskQueue: string;
  box: SecretBox;
  /** The outbound target policy the endpoint's URL must pass. */
  targets: TargetPolicy;
}

async function checkTarget(targets: TargetPolicy, url: string): Promise<void> {
  try {
    await targets.check(url);
  } catch (error) {
    if (error instanceof TargetRefusal)
      throw new HttpError(422, "targetNotAllowed", `url: ${error.message}`, {
        field: "url",
        reason: "targetNotAllowed",
      });
    // Else a name the operator trusts did not resolve (yet): theirs to fix; delivery retries.
  }
}

export function createEventsRouter(deps: EventsRouteDeps): Router {
  const router = Router();

  router.put("/v1/events/endpoint", async function setEventsEndpoint(req, res) {
    const namespace = namespaceOf(req);
    const body = parseOrThrow(eventsEndpointBody, req.body, "body");
    await checkTarget(deps.targets, body.url);
    const secret = body.secret ?? generateWebhookSecret();
    const endpoint = { url: body.url, sealedSecret: deps.box.seal(secret) };
    await deps.client.workflow.executeUpdateWithStart(setEventsEndpointUpdate, {
      args: [endpoint],
      startWorkflowOperation: new WithStartWorkflowOperation(NAMESPACE_SETTINGS_WORKFLOW_TYPE, {
        workflowId: namespaceSettingsWorkflowId(namespace),
        taskQueue: deps.taskQueue,
        args: [{}],
        workflowIdConflictPolicy: "USE_EXISTING",
      }),
    });
    res.json({ url: body.url, ...(body.secret ? {} : { secret }) });
  });

  router.get("/v1/events/endpoint", async function getEventsEndpoint(req, res) {
    const handle = deps.client.workflow.getHandle(namespaceSettingsWorkflowId(namespaceOf(req)));
    const settings = await handle.query(getNamespaceSettingsQuery).catch((error: unknown) => {
      if ((error as { name?: string }).name === "WorkflowNotFoundError") return undefined;
      throw error;
    });
    if (!settings?.eventsEndpoint) throw notFound("an events endpoint for this namespace");
    res.json({ url: settings.eventsEndpoint.url });
  });

  return router;
}
