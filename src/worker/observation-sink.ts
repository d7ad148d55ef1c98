/**
 * The worker's side of the runs' observation sink (shared/observation-sinks.ts): the result
 * shapes runs report go on to their toolset's record as signals. Reports are gathered for a
 * moment first: every run of a toolset reports the same shapes (each run a new shape at its first
 * result of a tool and the repeats as it ends), and each signal costs Temporal an event and the
 * record a workflow task. Reports of the same record, tool and shape are sent as one signal
 * with their counts summed; the record merges what it receives either way. Best effort, like
 * the signals runs used to send themselves: a record that can't be reached loses the report,
 * and a later run observes the shape again; `flush` sends what is gathered when the worker stops.
 */
import type { Client } from "@temporalio/client";
import type { InjectedSinks } from "@temporalio/worker";
import { shapeKey, type ObservedResultReport, type ObservationSinks } from "../shared/index.ts";
import { observeResultsSignal } from "../workflows/messages.ts";

/** How long reports are gathered before they are sent. */
const GATHER_MS = 250;

export interface ObservationReports {
  sinks: InjectedSinks<ObservationSinks>;
  /** Sends every report gathered so far, after those sent before; resolves once each signal was answered or failed. */
  flush(): Promise<void>;
}

export function createObservationReports(client: Client, gatherMs = GATHER_MS): ObservationReports {
  let gathered = new Map<string, ObservedResultReport>();
  let timer: NodeJS.Timeout | undefined;

  const send = ({ recordId, tool, shape, count }: ObservedResultReport): Promise<void> =>
    client.workflow
      .getHandle(recordId)
      .signal(observeResultsSignal, { tool, shape, count })
      .catch(() => undefined);

  /** Signals go out one after another, in the order their shapes were first reported: the record merges shapes in the order it gets them. */
  let sending = Promise.resolve();
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const reports = [...gathered.values()];
    gathered = new Map();
    sending = sending.then(async () => {
      for (const report of reports) await send(report);
    });
    return sending;
  };

  const gather = (report: ObservedResultReport): void => {
    const key = JSON.stringify([report.recordId, report.tool, shapeKey(report.shape)]);
    const same = gathered.get(key);
    if (same) same.count += report.count;
    else gathered.set(key, { ...report });
    if (!timer) {
      timer = setTimeout(() => void flush(), gatherMs);
      timer.unref();
    }
  };

  return {
    sinks: { observations: { observed: { fn: (_info, report) => gather(report) } } },
    flush,
  };
}
