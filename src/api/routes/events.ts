/**
 * Where a namespace's events go: `PUT /v1/events/endpoint {url, secret?}` stores the endpoint
 * in the namespace's settings workflow with the signing secret sealed; without a secret one is
 * generated and returned once. `GET` shows the URL, never the secret.
 */
import { Router } from "express";
import { WithStartWorkflowOperation, type Client } from "@temporalio/client";
import type { SecretBox } from "../../credentials/secret-box.ts";
import { generateWebhookSecret } from "../../events/sign-event.ts";
import { NAMESPACE_SETTINGS_WORKFLOW_TYPE, namespaceSettingsWorkflowId } from "../../shared/events.ts";
import { getNamespaceSettingsQuery, setEventsEndpointUpdate } from "../../workflows/namespace-settings.ts";
import { namespaceOf } from "../auth.ts";
import { notFound } from "../http-error.ts";
import { eventsEndpointBody } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface EventsRouteDeps {
  client: Client;
  taskQueue: string;
  box: SecretBox;
}

export function createEventsRouter(deps: EventsRouteDeps): Router {
  const router = Router();

  router.put("/v1/events/endpoint", async function setEventsEndpoint(req, res) {
    const namespace = namespaceOf(req);
    const body = parseOrThrow(eventsEndpointBody, req.body, "body");
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
