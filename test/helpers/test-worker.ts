/**
 * In-process Rewind workers on a test stack's queue, for tests that start several workers of
 * their own (the stack started with `noWorker`) and stop them by hand. Every worker gets the
 * stack's settings and the test secret key; the test adds what tells its workers apart. The
 * workers started are kept, so the file's afterAll stops them all.
 */
import path from "node:path";
import type { RewindStack } from "./rewind-stack.ts";
import { TEST_SECRET_KEY } from "./secret-key.ts";
import { createRewindWorker, type RewindWorker, type RewindWorkerOptions } from "../../src/worker/create-worker.ts";

export interface TestWorkers {
  /** The workers started and not yet stopped through `shutdownStarted`. */
  readonly started: RewindWorker[];
  /**
   * Starts a worker on the stack's queue, `extra` overriding the stack's settings; `afterRun`
   * is called once the worker's run ends (e.g. to dispose of the sandbox it was given).
   */
  start(stack: RewindStack, extra?: Partial<RewindWorkerOptions>, afterRun?: () => void): Promise<RewindWorker>;
  /** Shuts down the workers started so far, one after the other, and forgets them. */
  shutdownStarted(): Promise<void>;
  /** For afterAll: shuts down every worker still started and waits for their runs to end, failures ignored. */
  stopAll(): Promise<void>;
}

export function testWorkers(): TestWorkers {
  const started: RewindWorker[] = [];
  const running: Promise<void>[] = [];
  return {
    started,
    async start(stack, extra = {}, afterRun) {
      const worker = await createRewindWorker({
        address: stack.address,
        namespace: stack.config.temporal.namespace,
        taskQueue: stack.config.temporal.taskQueue,
        sandbox: stack.config.sandbox,
        warmIsolates: 64,
        eagerCalls: stack.config.eagerCalls,
        spareSessionIdleMs: stack.config.spareSessionIdleMs,
        accelerators: stack.config.accelerators,
        cacheDir: path.join(stack.config.stateDir, "cache"),
        secretKey: TEST_SECRET_KEY,
        publicUrl: stack.api.url,
        payloads: stack.config.payloads,
        ...extra,
      });
      started.push(worker);
      running.push(afterRun ? worker.run().finally(afterRun) : worker.run());
      return worker;
    },
    async shutdownStarted() {
      for (const worker of started.splice(0)) await worker.shutdown();
    },
    async stopAll() {
      await Promise.all(started.map((worker) => worker.shutdown().catch(() => undefined)));
      await Promise.all(running.map((run) => run.catch(() => undefined)));
    },
  };
}
