/**
 * The worker's side of the runs' observation sink (shared/observation-sinks.ts): each report a
 * run makes of the result shapes it saw goes on to its toolset's record as a signal. Best effort,
 * like the signals runs used to send themselves: a record that can't be reached loses the
 * report, and a later run observes the shape again.
 */
import type { Client } from "@temporalio/client";
import type { InjectedSinks } from "@temporalio/worker";
import type { ObservationSinks } from "../shared/index.ts";
import { observeResultsSignal } from "../workflows/messages.ts";

export function observationSinks(client: Client): InjectedSinks<ObservationSinks> {
  return {
    observations: {
      observed: {
        fn(_info, { recordId, tool, shape, count }) {
          void client.workflow
            .getHandle(recordId)
            .signal(observeResultsSignal, { tool, shape, count })
            .catch(() => undefined);
        },
      },
    },
  };
}
