/**
 * What clients may send to a namespace's settings (namespace-settings.ts): the API and the event
 * delivery read them with a query and change them with an update. Its own file so they import
 * the definitions, not the workflow.
 */
import { defineQuery, defineUpdate } from "@temporalio/workflow";
import type { EventsEndpoint } from "../../shared/index.ts";

export interface NamespaceSettings {
  eventsEndpoint?: EventsEndpoint;
}

export const getNamespaceSettingsQuery = defineQuery<NamespaceSettings>("getNamespaceSettings");
export const setEventsEndpointUpdate = defineUpdate<NamespaceSettings, [EventsEndpoint | null]>("setEventsEndpoint");
