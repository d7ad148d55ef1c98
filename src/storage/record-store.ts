/**
 * Immutable records kept in Temporal (the only stateful dependency): `save` starts a record
 * workflow whose input is the record (a second save of the same id finds it and changes
 * nothing); `load` reads the input back from the first history event, so it needs no worker.
 * Records never change, so loads are cached, and loads of one record at once read it once.
 */
import { fromHistoryPayload } from "../payloads/index.ts";
import { WorkflowExecutionAlreadyStartedError, type Client } from "@temporalio/client";
import { InFlight } from "./in-flight.ts";

export interface RecordStore<T> {
  /** Returns true when this call stored it, false when it was already there. */
  save(namespace: string, id: string, record: T): Promise<boolean>;
  load(namespace: string, id: string): Promise<T | undefined>;
}

export interface RecordStoreOptions<T, I> {
  client: Client;
  taskQueue: string;
  workflowType: string;
  workflowId(namespace: string, id: string): string;
  toInput(namespace: string, id: string, record: T): I;
  fromInput(input: I): T;
}

const MAX_CACHED = 1000;

export function createRecordStore<T, I>(options: RecordStoreOptions<T, I>): RecordStore<T> {
  const { client } = options;
  const cache = new Map<string, T>();
  const reading = new InFlight<T | undefined>();
  const remember = (key: string, record: T) => {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value ?? "");
    cache.set(key, record);
  };

  return {
    async save(namespace, id, record) {
      const workflowId = options.workflowId(namespace, id);
      try {
        await client.workflow.start(options.workflowType, {
          taskQueue: options.taskQueue,
          workflowId,
          args: [options.toInput(namespace, id, record)],
          workflowIdReusePolicy: "REJECT_DUPLICATE",
        });
        remember(workflowId, record);
        return true;
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
        throw error;
      }
    },

    async load(namespace, id) {
      const workflowId = options.workflowId(namespace, id);
      const cached = cache.get(workflowId);
      if (cached) return cached;
      // Loads of one record at once (runs posted together, before it is cached) read it once.
      return reading.share(workflowId, () => read(workflowId));
    },
  };

  async function read(workflowId: string): Promise<T | undefined> {
    let response;
    try {
      response = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId },
        maximumPageSize: 1,
      });
    } catch (error) {
      if ((error as { code?: number }).code === 5 /* gRPC NOT_FOUND */) return undefined;
      throw error;
    }
    const payload = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!payload) return undefined;
    const record = options.fromInput(await fromHistoryPayload<I>(client.options.loadedDataConverter, payload));
    remember(workflowId, record);
    return record;
  }
}
