/**
 * Reports a run's life to the worker's metrics through a sink, without touching the run's code:
 * a workflow interceptor (bundled with the workflows) that sees the run start (a first
 * execution, not a continue-as-new), end (completed, failed with its failure type, cancelled) or
 * continue as new, and each parking announced with its event (approval, input, schema change,
 * credentials). It issues no command, so histories replay as they ran; sinks are not called on
 * replay, so each fact is counted once. Other workflow types are not intercepted.
 */
import {
  ApplicationFailure,
  ContinueAsNew,
  TemporalFailure,
  isCancellation,
  proxySinks,
  workflowInfo,
  type Next,
  type StartChildWorkflowExecutionInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from "@temporalio/workflow";
import {
  DELIVER_EVENT_WORKFLOW_TYPE,
  type DeliverEventInput,
  RUN_FAILURE_TYPES,
  RUN_WORKFLOW_TYPE,
} from "../shared/index.ts";
import type { RunMetricsSinks } from "../shared/index.ts";

const { runMetrics } = proxySinks<RunMetricsSinks>();

const FAILURE_TYPES: readonly string[] = Object.values(RUN_FAILURE_TYPES);

class RunLifecycle implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, "execute">): Promise<unknown> {
    if (workflowInfo().continuedFromExecutionRunId === undefined) runMetrics.started();
    try {
      const result = await next(input);
      runMetrics.ended("completed");
      return result;
    } catch (error) {
      if (error instanceof ContinueAsNew) runMetrics.continued();
      else if (isCancellation(error)) runMetrics.ended("cancelled");
      else if (error instanceof ApplicationFailure)
        runMetrics.ended("failed", FAILURE_TYPES.includes(error.type ?? "") ? (error.type ?? "") : "other");
      // Any other error fails the workflow task, not the run: Temporal retries the task.
      else if (error instanceof TemporalFailure) runMetrics.ended("failed", "other");
      throw error;
    }
  }
}

/** The parking reason an event announces, if it announces one. */
function parkReasonOf(input: StartChildWorkflowExecutionInput): string | undefined {
  if (input.workflowType !== DELIVER_EVENT_WORKFLOW_TYPE) return undefined;
  const event = (input.options.args[0] as DeliverEventInput | undefined)?.event;
  switch (event?.type) {
    case "call.approval_requested":
      return "approval";
    case "call.input_requested":
      return "elicitationRequested";
    case "tool.schema_changed":
      return "schemaChanged";
    case "credentials.expired":
      return (event.data as { reason?: string }).reason ?? "credentialsExpired";
    default:
      return undefined;
  }
}

class ParkAnnouncements implements WorkflowOutboundCallsInterceptor {
  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, "startChildWorkflowExecution">,
  ): ReturnType<Next<WorkflowOutboundCallsInterceptor, "startChildWorkflowExecution">> {
    const reason = parkReasonOf(input);
    if (reason) runMetrics.parked(reason);
    return next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () =>
  workflowInfo().workflowType === RUN_WORKFLOW_TYPE
    ? { inbound: [new RunLifecycle()], outbound: [new ParkAnnouncements()] }
    : {};
