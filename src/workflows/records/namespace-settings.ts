/**
 * A namespace's settings, kept in Temporal as an entity workflow: for now, where its events go.
 * Updates change them, a query reads them. It continues as new when Temporal suggests, carrying
 * the settings, so it can live for years.
 */
import { condition, continueAsNew, setHandler, workflowInfo } from "@temporalio/workflow";
import {
  getNamespaceSettingsQuery,
  setEventsEndpointUpdate,
  type NamespaceSettings,
} from "./namespace-settings-messages.ts";

export async function namespaceSettings(initial: NamespaceSettings): Promise<void> {
  const settings: NamespaceSettings = { ...initial };
  setHandler(getNamespaceSettingsQuery, () => settings);
  setHandler(setEventsEndpointUpdate, (endpoint) => {
    if (endpoint) settings.eventsEndpoint = endpoint;
    else delete settings.eventsEndpoint;
    return settings;
  });
  await condition(() => workflowInfo().continueAsNewSuggested);
  await continueAsNew<typeof namespaceSettings>(settings);
}
