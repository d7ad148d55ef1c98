/**
 * The `deliverEvent` activity: POST one event to the namespace's endpoint, signed as a Standard
 * Webhook. A non-2xx answer or a network failure throws, and the delivery workflow's retry
 * policy tries again later with the same `webhook-id`; a namespace without an endpoint drops it.
 * A tenant's endpoint goes through the outbound target policy (its address checked, the socket
 * pinned to it, a redirect not followed): refused, the delivery fails for good (TargetNotAllowed),
 * since retrying would only ask again; the operator's own endpoint (REWIND_EVENTS_URL) does not.
 */
import { Context } from "@temporalio/activity";
import { ApplicationFailure } from "@temporalio/common";
import type { EndpointResolver } from "../events/index.ts";
import { signedHeaders } from "../events/index.ts";
import { TargetRefusal, type TargetPolicy } from "../http-tool/index.ts";
import type { DeliverEventInput } from "../shared/index.ts";
import { CALL_FAILURE } from "../shared/index.ts";

export interface DeliverEventDeps {
  endpoints: EndpointResolver;
  /** The outbound target policy tenants' endpoints go through. Default: none, a plain fetch. */
  targets?: TargetPolicy;
}

const REQUEST_TIMEOUT_MS = 15_000;

export function createDeliverEvent(deps: DeliverEventDeps) {
  return async function deliverEvent(input: DeliverEventInput): Promise<{ delivered: boolean }> {
    const endpoint = await deps.endpoints.resolve(input.namespace);
    if (!endpoint) {
      Context.current().log.info("no events endpoint for the namespace; event dropped", {
        namespace: input.namespace,
        type: input.event.type,
      });
      return { delivered: false };
    }
    const body = JSON.stringify(input.event);
    const session =
      endpoint.chosenBy === "tenant" && deps.targets ? deps.targets.session({ followRedirects: false }) : undefined;
    let response: Response;
    try {
      response = await (session?.fetch ?? fetch)(endpoint.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...signedHeaders(endpoint.secret, input.event.id, body, new Date()),
        },
        body,
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), Context.current().cancellationSignal]),
      });
      await response.body?.cancel();
    } catch (error) {
      if (error instanceof TargetRefusal) {
        throw ApplicationFailure.create({
          type: CALL_FAILURE.targetNotAllowed,
          message: `events endpoint: ${error.message}`,
          nonRetryable: true,
        });
      }
      throw error;
    } finally {
      await session?.close();
    }
    if (response.status < 200 || response.status >= 300) {
      throw new Error(`the events endpoint answered ${response.status} for ${input.event.type} ${input.event.id}`);
    }
    return { delivered: true };
  };
}
