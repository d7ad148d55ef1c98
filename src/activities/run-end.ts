/**
 * What the step that ends a run also tells the workflow: whether the run's namespace has an
 * events endpoint, so a run without one starts no delivery workflow that would only drop its
 * event. Unknown (the lookup failed) is left out, and the workflow delivers as usual.
 */
import type { EndpointResolver } from "../events/index.ts";
import type { AdvanceResult } from "../shared/index.ts";

export async function withEventsEndpoint<R extends AdvanceResult>(
  result: R,
  namespace: string | undefined,
  endpoints: EndpointResolver | undefined,
): Promise<R> {
  if ((result.kind !== "done" && result.kind !== "failed") || namespace === undefined || !endpoints) return result;
  const endpoint = await endpoints.resolve(namespace).then(
    (found) => found !== undefined,
    () => undefined,
  );
  return endpoint === undefined ? result : { ...result, eventsEndpoint: endpoint };
}
