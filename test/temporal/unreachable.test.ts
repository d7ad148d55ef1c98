/**
 * How a failed Temporal call is told apart: real errors from a real client — towards a port
 * nothing listens on (refused at once: UNAVAILABLE naming ECONNREFUSED; or cut by a deadline),
 * and towards the test run's live server (a deadline it would have met, a workflow it does not
 * have). Only the first kind is Temporal being unreachable.
 */
import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  WorkflowNotFoundError,
} from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { getFreePort } from "../../src/dev/index.ts";
import { isTemporalUnreachable, temporalAnswers, temporalCallFailure } from "../../src/temporal/unreachable.ts";

let live: Connection;
let closed: Connection;
let closedNoRetries: Connection;

beforeAll(async () => {
  const port = await getFreePort();
  live = await Connection.connect({ address: inject("temporalAddress") });
  closed = Connection.lazy({ address: `127.0.0.1:${port}` });
  closedNoRetries = Connection.lazy({
    address: `127.0.0.1:${port}`,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 1 }))],
  });
});
afterAll(async () => {
  await Promise.all([live?.close(), closed?.close(), closedNoRetries?.close()]);
});

async function failure(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => expect.fail("the call succeeded"),
    (error: unknown) => error,
  );
}

describe("a server that is not there", () => {
  it("is UNAVAILABLE with the transport's reason, under the client's ServiceError too", async () => {
    const bare = await failure(() => closedNoRetries.workflowService.getSystemInfo({}));
    expect(temporalCallFailure(bare)).toEqual({ kind: "unavailable", reason: expect.stringMatching(/ECONNREFUSED/) });
    const client = new Client({ connection: closedNoRetries });
    const wrapped = await failure(() => client.workflow.getHandle("nowhere").describe());
    expect((wrapped as Error).name).toBe("ServiceError");
    expect(temporalCallFailure(wrapped)?.kind).toBe("unavailable");
    expect(await isTemporalUnreachable(wrapped, () => temporalAnswers(closedNoRetries))).toBe(true);
  });

  it("cut by a deadline, counts once asked again without an answer", async () => {
    const cut = await failure(() =>
      closed.withDeadline(Date.now() + 500, () => closed.workflowService.getSystemInfo({})),
    );
    expect(temporalCallFailure(cut)).toBeDefined();
    expect(await temporalAnswers(closed, 500)).toBe(false);
    expect(await isTemporalUnreachable(cut, () => temporalAnswers(closed, 500))).toBe(true);
  });
});

describe("a live server", () => {
  it("answers; its deadline failure is not unreachability", async () => {
    expect(await temporalAnswers(live)).toBe(true);
    const late = await failure(() => live.withDeadline(Date.now() - 1, () => live.workflowService.getSystemInfo({})));
    expect(temporalCallFailure(late)?.kind).toBe("deadline");
    expect(await isTemporalUnreachable(late, () => temporalAnswers(live))).toBe(false);
  });

  it("a workflow it does not have is no failure of Temporal's", async () => {
    const client = new Client({ connection: live, namespace: inject("temporalNamespace") });
    const missing = await failure(() => client.workflow.getHandle(`missing-${Date.now()}`).describe());
    expect(missing).toBeInstanceOf(WorkflowNotFoundError);
    expect(temporalCallFailure(missing)).toBeUndefined();
    expect(temporalCallFailure(new Error("anything else"))).toBeUndefined();
  });
});
