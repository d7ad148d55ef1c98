/**
 * Worker Versioning: a worker started with REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID serves
 * one Worker Deployment version. A pinned run stays on the version that started it after a new
 * version becomes current (it does not move to the new workers, even with its own workers
 * gone), while new runs go to the current version. Plus the configuration's validation.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual, promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { workerDeploymentOptions } from "../../src/worker/create-worker.ts";
import { toolsetWorkflowId } from "../../src/shared/toolset-record.ts";
import { deliverSignal } from "../../src/workflows/run/messages.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { spawnWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

const run = promisify(execFile);

describe("worker deployment configuration", () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ REWIND_STATE_DIR: "/tmp/rewind-config-test", ...env }, "/tmp");

  it("is off unless both the deployment name and the build id are set", () => {
    expect(load({}).temporal.deployment).toBeUndefined();
    expect(load({ REWIND_DEPLOYMENT_NAME: "", REWIND_BUILD_ID: "" }).temporal.deployment).toBeUndefined();
    expect(workerDeploymentOptions(undefined)).toEqual({});
  });

  it("defaults to pinned runs and maps the behaviour to the SDK's", () => {
    const pinned = load({ REWIND_DEPLOYMENT_NAME: "rewind", REWIND_BUILD_ID: "2024-06-01.3" }).temporal.deployment;
    expect(pinned).toEqual({ name: "rewind", buildId: "2024-06-01.3", defaultBehavior: "pinned" });
    expect(
      load({
        REWIND_DEPLOYMENT_NAME: "rewind",
        REWIND_BUILD_ID: "release/1.2+abc",
        REWIND_VERSIONING_BEHAVIOR: "pinned",
      }).temporal.deployment?.buildId,
    ).toBe("release/1.2+abc");
    expect(workerDeploymentOptions(pinned)).toEqual({
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: { deploymentName: "rewind", buildId: "2024-06-01.3" },
        defaultVersioningBehavior: "PINNED",
      },
    });
    const upgrading = load({
      REWIND_DEPLOYMENT_NAME: "rewind",
      REWIND_BUILD_ID: "abc123",
      REWIND_VERSIONING_BEHAVIOR: "auto-upgrade",
    }).temporal.deployment;
    expect(workerDeploymentOptions(upgrading).workerDeploymentOptions?.defaultVersioningBehavior).toBe("AUTO_UPGRADE");
  });

  it.each([
    [
      { REWIND_DEPLOYMENT_NAME: "rewind", REWIND_BUILD_ID: "v1", REWIND_VERSIONING_BEHAVIOR: "PINNED" },
      'REWIND_VERSIONING_BEHAVIOR must be pinned or auto-upgrade, got "PINNED"',
    ],
    [{ REWIND_VERSIONING_BEHAVIOR: "sometimes" }, "REWIND_VERSIONING_BEHAVIOR must be pinned or auto-upgrade"],
    [{ REWIND_DEPLOYMENT_NAME: "re.wind" }, "REWIND_DEPLOYMENT_NAME must be"],
    [{ REWIND_DEPLOYMENT_NAME: "re.wind", REWIND_BUILD_ID: "v1" }, "REWIND_DEPLOYMENT_NAME must be"],
    [{ REWIND_DEPLOYMENT_NAME: "re:wind", REWIND_BUILD_ID: "v1" }, "REWIND_DEPLOYMENT_NAME must be"],
    [{ REWIND_DEPLOYMENT_NAME: "__rewind", REWIND_BUILD_ID: "v1" }, "REWIND_DEPLOYMENT_NAME must be"],
    [{ REWIND_DEPLOYMENT_NAME: "rewind", REWIND_BUILD_ID: "v 1" }, "REWIND_BUILD_ID must be"],
    [{ REWIND_DEPLOYMENT_NAME: "rewind", REWIND_BUILD_ID: "__unversioned__" }, "REWIND_BUILD_ID must be"],
  ])("refuses %j", (env, message) => {
    expect(() => load(env)).toThrow(ConfigError);
    expect(() => load(env)).toThrow(message);
  });
});

const WAITING_SCRIPT =
  'import { waitForSignal } from "rewind:tools";\nexport default async () => ({ heard: await waitForSignal<string>("go", { timeout: "1 hour" }) });';

/** A stack without a worker, a deployment name of its own, and what a test does with them. */
function versionedStack(behavior: "pinned" | "auto-upgrade") {
  let stack: RewindStack;
  const workers: WorkerProcess[] = [];
  const deploymentName = `rewind-test-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    stack = await startRewindStack({ noWorker: true });
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill("SIGTERM")));
    await stack?.stop();
  });

  const fixture = {
    deploymentName,
    get stack() {
      return stack;
    },

    /** `rewind worker` of version `buildId`, as an operator would start it. */
    async startWorker(buildId: string): Promise<WorkerProcess> {
      const worker = await spawnWorker({
        TEMPORAL_ADDRESS: stack.address,
        REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
        REWIND_STATE_DIR: stack.config.stateDir,
        REWIND_LOG_LEVEL: "info",
        REWIND_DEPLOYMENT_NAME: deploymentName,
        REWIND_BUILD_ID: buildId,
        REWIND_VERSIONING_BEHAVIOR: behavior,
      });
      workers.push(worker);
      return worker;
    },

    /** What an operator runs: `temporal worker deployment set-current-version`. */
    async setCurrent(buildId: string): Promise<void> {
      const args = [
        "worker",
        "deployment",
        "set-current-version",
        "--address",
        stack.address,
        "--namespace",
        stack.config.temporal.namespace,
        "--deployment-name",
        deploymentName,
        "--build-id",
        buildId,
        "--yes",
      ];
      // The server learns of a version from its workers' first polls; until then it refuses.
      await waitFor(
        `the server to take ${args.join(" ")}`,
        async () => {
          await run(inject("temporalCliPath"), args);
          return true;
        },
        { timeoutMs: 10_000, intervalMs: 200, retryErrors: true },
      );
    },

    /** The run's versioning info, as `temporal workflow describe` shows it. */
    async versioning(id: string) {
      const description = await stack.client.workflow.getHandle(id).describe();
      const info = description.raw.workflowExecutionInfo?.versioningInfo;
      return {
        behavior: info?.behavior,
        buildId: info?.deploymentVersion?.buildId,
        deploymentName: info?.deploymentVersion?.deploymentName,
      };
    },

    /** The run's latest workflow task: the kind of queue it was scheduled on, and whether a worker took it. */
    async lastWorkflowTask(id: string) {
      const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
      const at = events.findLastIndex((event) => event.eventType === 5 /* WORKFLOW_TASK_SCHEDULED */);
      const kind = events[at]?.workflowTaskScheduledEventAttributes?.taskQueue?.kind;
      return {
        queue: kind === 1 ? "normal" : kind === 2 ? "sticky" : String(kind),
        started: events.slice(at + 1).some((event) => event.eventType === 6 /* WORKFLOW_TASK_STARTED */),
      };
    },

    async startRun(script: string): Promise<string> {
      const started = await stack.request("POST", "/v1/runs", { script });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return String(started.body.id);
    },

    /**
     * Signals the run after dropping its sticky queue, so the task goes straight to the task
     * queue every worker polls (else it would first wait 10 s for the worker that took the last one).
     */
    async signal(id: string, payload: string): Promise<void> {
      await stack.client.workflowService.resetStickyTaskQueue({
        namespace: stack.config.temporal.namespace,
        execution: { workflowId: id },
      });
      await stack.client.workflow.getHandle(id).signal(deliverSignal, { name: "go", payload });
    },
  };
  return fixture;
}

const PINNED = 1;
const AUTO_UPGRADE = 2;

describe("worker versioning: pinned runs", () => {
  const t = versionedStack("pinned");

  it("keeps a pinned run on its version while new runs go to the current one", async () => {
    const v1 = await t.startWorker("v1");
    expect(v1.output()).toContain(`deploymentVersion=${t.deploymentName}.v1 versioning=pinned`);
    await t.setCurrent("v1");

    const waiting = await t.startRun(WAITING_SCRIPT);
    await waitFor(`the versioning of ${waiting}`, () => t.versioning(waiting), {
      timeoutMs: 15_000,
      intervalMs: 200,
      until: (versioning) =>
        isDeepStrictEqual(versioning, { behavior: PINNED, buildId: "v1", deploymentName: t.deploymentName }),
    });

    // A toolset's record never ends: it auto-upgrades even on pinned workers, so v1 can drain.
    const registered = await t.stack.request("POST", "/v1/toolsets", {
      http: { allowedHosts: [`versioned-${randomUUID()}.test`] },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const record = toolsetWorkflowId(t.stack.config.temporal.namespace, String(registered.body.id));
    await waitFor(`the versioning of ${record}`, () => t.versioning(record), {
      timeoutMs: 15_000,
      intervalMs: 200,
      until: (versioning) =>
        isDeepStrictEqual(versioning, { behavior: AUTO_UPGRADE, buildId: "v1", deploymentName: t.deploymentName }),
    });

    await t.startWorker("v2");
    await t.setCurrent("v2");
    const fresh = await t.startRun("export default async () => 2");
    expect(await waitForRun(t.stack, fresh, 20_000)).toMatchObject({ status: "completed", result: 2 });
    expect(await t.versioning(fresh)).toMatchObject({ behavior: PINNED, buildId: "v2" });

    // v1's workers go away while the pinned run waits for its signal; its next task waits for v1
    // although v2 polls its queue.
    expect((await t.stack.request("GET", `/v1/runs/${waiting}`)).body.status).toBe("running");
    await v1.kill("SIGTERM");
    await t.signal(waiting, "now");
    await waitFor("the run's next workflow task to be scheduled", () => t.lastWorkflowTask(waiting), {
      timeoutMs: 5_000,
      until: (task) => isDeepStrictEqual(task, { queue: "normal", started: false }),
    });
    // Not a wait for something to happen: the period in which v2's workers must not take the task.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(await t.lastWorkflowTask(waiting)).toEqual({ queue: "normal", started: false });
    expect((await t.stack.request("GET", `/v1/runs/${waiting}`)).body.status).toBe("running");
    expect(await t.versioning(waiting)).toMatchObject({ behavior: PINNED, buildId: "v1" });

    // A v1 worker again: the run takes the signal and ends there.
    await t.startWorker("v1");
    const done = await waitForRun(t.stack, waiting, 20_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ heard: "now" });
    expect(await t.versioning(waiting)).toMatchObject({ behavior: PINNED, buildId: "v1" });
  }, 90_000);
});

describe("worker versioning: auto-upgrade runs", () => {
  const t = versionedStack("auto-upgrade");

  it("moves an open auto-upgrade run to the new current version at its next task", async () => {
    await t.startWorker("v1");
    await t.setCurrent("v1");
    const waiting = await t.startRun(WAITING_SCRIPT);
    await waitFor(`the versioning of ${waiting}`, () => t.versioning(waiting), {
      timeoutMs: 15_000,
      intervalMs: 200,
      until: (versioning) =>
        isDeepStrictEqual(versioning, { behavior: AUTO_UPGRADE, buildId: "v1", deploymentName: t.deploymentName }),
    });

    await t.startWorker("v2");
    await t.setCurrent("v2");
    await t.signal(waiting, "later");
    const done = await waitForRun(t.stack, waiting, 20_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ heard: "later" });
    expect(await t.versioning(waiting)).toMatchObject({ behavior: AUTO_UPGRADE, buildId: "v2" });
  }, 90_000);
});
