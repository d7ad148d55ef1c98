/**
 * Tells the toolset's record the shapes of results this run saw, for tools without an output
 * schema. A shape new to this run is sent at once; repeats are only counted and sent when the
 * run ends or continues as new, so a thousand identical results cost one report, not a thousand.
 * A run since `PATCHES.observationsBySink` reports through the worker's sink, which signals the
 * record: no command, no workflow task, nothing to wait for. A run from before sends the signals
 * itself, and one that ends waits for every one of them first: Temporal drops a signal whose
 * sender closed before it went out, and the shape would never be observed.
 */
import { getExternalWorkflowHandle, proxySinks } from "@temporalio/workflow";
import { mergeShapes, shapeKey, shapeOf, toolsetWorkflowId } from "../../shared/index.ts";
import type { ObservationSinks, PinnedToolset, ShapeOptions } from "../../shared/index.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import { observeResultsSignal } from "../records/toolset-record-messages.ts";

const { observations: sink } = proxySinks<ObservationSinks>();

interface Seen {
  keys: Set<string>;
  shape: Record<string, unknown>;
  pending: number;
}

export class Observations {
  private readonly seen = new Map<string, Seen>();
  private readonly wanted = new Set<string>();
  /** Signals of shapes new to the run that Temporal has not answered yet. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly recordId: string;
  /** Whether reports go through the worker's sink (`PATCHES.observationsBySink`, asked once as the run starts). */
  private readonly bySink: boolean;

  /** How shapes are taken: data-keyed objects as records for runs of runtime 4 on (see ShapeOptions). */
  private readonly shapes: ShapeOptions;

  constructor(
    namespace: string,
    toolsetId: string,
    toolset: PinnedToolset,
    bySink: boolean,
    shapes: ShapeOptions = {},
  ) {
    this.recordId = toolsetWorkflowId(namespace, toolsetId);
    this.bySink = bySink;
    this.shapes = shapes;
    for (const [group, server] of Object.entries({ ...toolset.mcpServers, ...toolset.hostTools })) {
      for (const tool of server.tools) if (tool.outputSchema === undefined) this.wanted.add(`${group}.${tool.name}`);
    }
  }

  record(tool: string, value: unknown): void {
    if (!this.wanted.has(tool)) return;
    const shape = shapeOf(value, this.shapes);
    const key = shapeKey(shape);
    const seen = this.seen.get(tool);
    if (!seen) {
      this.seen.set(tool, { keys: new Set([key]), shape, pending: 0 });
      this.sendNew(tool, shape, 1);
    } else if (!seen.keys.has(key)) {
      seen.keys.add(key);
      seen.shape = mergeShapes(seen.shape, shape, this.shapes);
      this.sendNew(tool, shape, seen.pending + 1);
      seen.pending = 0;
    } else {
      seen.pending += 1;
    }
  }

  /**
   * Sends the counts not sent yet, and waits for them and for every new shape's signal still on
   * its way. A run that is about to end or continue as new must await it: Temporal drops a
   * signal its sender closes before the signal went out.
   */
  async flush(): Promise<void> {
    const sent: Promise<void>[] = [];
    for (const [tool, seen] of this.seen) {
      if (seen.pending > 0) sent.push(this.send(tool, seen.shape, seen.pending));
      seen.pending = 0;
    }
    // Runs that ended before the patch did not wait for new shapes' signals; their histories
    // close in the workflow task that sent them. Whether one is in flight is itself replayed.
    if (this.inFlight.size > 0 && isPatched(PATCHES.observationsSentBeforeEnd)) sent.push(...this.inFlight);
    await Promise.all(sent);
  }

  /** Sends a shape new to the run at once, and remembers a signal until Temporal answers it. */
  private sendNew(tool: string, shape: Record<string, unknown>, count: number): void {
    const sending = this.send(tool, shape, count);
    // A sink's report has left with the activation: nothing to wait for.
    if (this.bySink) return;
    this.inFlight.add(sending);
    void sending.then(() => this.inFlight.delete(sending));
  }

  private send(tool: string, shape: Record<string, unknown>, count: number): Promise<void> {
    if (this.bySink) {
      sink.observed({ recordId: this.recordId, tool, shape, count });
      return Promise.resolve();
    }
    // Best effort: observations improve declarations, they never fail a run.
    return getExternalWorkflowHandle(this.recordId)
      .signal(observeResultsSignal, { tool, shape, count })
      .catch(() => undefined);
  }
}
