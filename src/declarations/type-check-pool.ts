/**
 * Type-checks scripts on a pool of worker threads, never on the thread that serves requests: a
 * script's types are written by a model, and the compiler can spend unbounded time and memory on
 * them. Each check has a deadline and each thread a heap cap; a check past either is abandoned,
 * its thread ended and replaced, and the caller told why (the API answers 422
 * `typeCheckTimedOut`). Checks wait in one queue per namespace, and a free thread takes the next
 * check of the next namespace in turn, so one tenant posting many scripts delays its own checks,
 * not another's; no namespace holds every thread of a pool of two or more, and a namespace whose
 * queue is full is refused at once.
 *
 * The pool starts one thread, and more (up to its size) when more checks wait than threads are free: loading the compiler and
 * checking a first script costs a thread about a second of CPU and 100 MB, which an API that
 * checks a script now and then should not pay for every thread it may need.
 *
 * Answers are remembered here as in each thread (a check is a pure function of its input), so a
 * script started again with new inputs costs no round trip, and the same script asked for many
 * times at once is checked once (a harness starting a fan-out of runs filled a queue otherwise).
 */
import { Worker } from "node:worker_threads";
import type { CheckAnswer, CheckRequest } from "./type-check-thread.ts";
import { answerKey, type ScriptInspection, type TypeCheckInput } from "./type-check.ts";

export interface TypeCheckPoolOptions {
  /** Threads checking at once. */
  threads: number;
  /** Checks one namespace may have waiting; one more is refused. */
  queuePerNamespace: number;
  /** How long one check may take on its thread. */
  deadlineMs: number;
  /** Each thread's heap cap. */
  memoryMb: number;
}

/** A check abandoned: past its deadline, past its thread's heap cap, or its thread died. */
export class TypeCheckAbandonedError extends Error {
  override name = "TypeCheckAbandonedError";
  readonly reason: "deadline" | "memory" | "crashed";
  constructor(reason: "deadline" | "memory" | "crashed", message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A namespace with as many checks waiting as it may have. */
export class TypeCheckQueueFullError extends Error {
  override name = "TypeCheckQueueFullError";
}

/** What the API needs of a checker: an answer, in time, for a script of a namespace. */
export interface ScriptChecker {
  inspect(input: TypeCheckInput, namespace?: string): Promise<ScriptInspection>;
}

export interface TypeCheckPool extends ScriptChecker {
  /** Resolves once every thread started so far has loaded the compiler and checked a first script. */
  ready(): Promise<void>;
  /** Threads started so far (at most the pool's size). */
  readonly threadCount: number;
  /** Ends the threads; checks waiting or under way are refused. */
  close(): Promise<void>;
}

interface Job {
  id: number;
  namespace: string;
  input: TypeCheckInput;
  key: string;
  resolve(inspection: ScriptInspection): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  started: Promise<void>;
  /** Ended by an error while no check was waiting: replaced when one comes. */
  dead?: boolean;
  job?: Job;
  deadline?: NodeJS.Timeout;
}

const MAX_REMEMBERED = 512;
const THREAD_FILE = new URL("./type-check-thread.ts", import.meta.url);

const copy = (found: ScriptInspection): ScriptInspection =>
  found.inputType === undefined
    ? { diagnostics: found.diagnostics.map((d) => ({ ...d })) }
    : { diagnostics: found.diagnostics.map((d) => ({ ...d })), inputType: found.inputType };

export function createTypeCheckPool(options: TypeCheckPoolOptions): TypeCheckPool {
  const remembered = new Map<string, ScriptInspection>();
  const underWay = new Map<string, Promise<ScriptInspection>>();
  const queues = new Map<string, Job[]>();
  /** Namespaces with checks waiting, in the order they get the next free thread. */
  const turn: string[] = [];
  let nextId = 1;
  let closed = false;

  const size = Math.max(1, options.threads);
  /** The threads started so far, at most `size`; more start as checks wait (see the header). */
  const threads: Thread[] = [startThread()];

  function startThread(): Thread {
    const worker = new Worker(THREAD_FILE, {
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: 32 },
      // No --no-node-snapshot and friends: the thread loads only TypeScript.
      execArgv: ["--disable-warning=ExperimentalWarning"],
    });
    worker.unref();
    const thread: Thread = {
      worker,
      started: new Promise<void>((resolve, reject) => {
        worker.once("message", () => resolve());
        worker.once("error", reject);
      }),
    };
    thread.started.catch(() => undefined);
    worker.on("message", (answer: CheckAnswer | { ready: true }) => {
      if ("ready" in answer) return void dispatch();
      const job = thread.job;
      if (!job || job.id !== answer.id) return;
      finish(thread);
      if ("error" in answer) job.reject(new Error(`the type-checker failed: ${answer.error}`));
      else {
        remember(job.key, answer.inspection);
        job.resolve(answer.inspection);
      }
      dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      // Dying before it answered anything (a heap cap too small for the compiler itself): the
      // next waiting check hears why, so no check waits for a thread that can never start.
      const job = thread.job ?? (threads.includes(thread) ? takeNext() : undefined);
      finish(thread);
      const memory = error.code === "ERR_WORKER_OUT_OF_MEMORY";
      job?.reject(
        memory
          ? new TypeCheckAbandonedError(
              "memory",
              `the type-check used more than its ${options.memoryMb} MB of memory and was abandoned`,
            )
          : new TypeCheckAbandonedError("crashed", `the type-check's thread failed: ${error.message}`),
      );
      // Started again now only for checks waiting; else when the next check comes.
      if (turn.length > 0) replace(thread);
      else thread.dead = true;
    });
    worker.on("exit", () => {
      if (thread.job) {
        const job = thread.job;
        finish(thread);
        job.reject(new TypeCheckAbandonedError("crashed", "the type-check's thread ended before it answered"));
        replace(thread);
      }
    });
    return thread;
  }

  function finish(thread: Thread): void {
    if (thread.deadline) clearTimeout(thread.deadline);
    delete thread.deadline;
    delete thread.job;
  }

  function replace(thread: Thread): void {
    if (closed) return;
    const index = threads.indexOf(thread);
    if (index < 0) return;
    void thread.worker.terminate().catch(() => undefined);
    threads[index] = startThread();
  }

  function remember(key: string, inspection: ScriptInspection): void {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value ?? "");
    remembered.set(key, inspection);
  }

  /** Hands waiting checks to free threads, one namespace after another. */
  function dispatch(): void {
    // More checks waiting than threads free (or starting) to take them: more threads, up to `size`.
    let waiting = 0;
    for (const queue of queues.values()) waiting += queue.length;
    const free = threads.filter((thread) => !thread.job).length;
    for (let more = Math.min(waiting - free, size - threads.length); more > 0; more--) threads.push(startThread());
    for (const [index, current] of threads.entries()) {
      if (current.job || turn.length === 0) continue;
      if (current.dead) replace(current);
      const thread = threads[index] ?? current;
      void thread.started.then(
        () => {
          if (thread.job || !threads.includes(thread)) return;
          const job = takeNext();
          if (!job) return;
          thread.job = job;
          thread.deadline = setTimeout(() => {
            if (thread.job !== job) return;
            finish(thread);
            job.reject(
              new TypeCheckAbandonedError(
                "deadline",
                `the type-check took longer than its ${options.deadlineMs} ms and was abandoned`,
              ),
            );
            replace(thread);
            dispatch();
          }, options.deadlineMs);
          const request: CheckRequest = { id: job.id, input: job.input };
          thread.worker.postMessage(request);
        },
        () => undefined,
      ); // a thread that failed to start: its error handler told the waiting check
    }
  }

  /**
   * The next check of the next namespace in turn that holds fewer threads than it may: all but
   * one (all of a one-thread pool), so a namespace whose checks run to their deadline always
   * leaves a thread to the others.
   */
  function takeNext(): Job | undefined {
    const mayHold = Math.max(1, size - 1);
    const holding = (namespace: string) => threads.filter((thread) => thread.job?.namespace === namespace).length;
    const index = turn.findIndex((namespace) => holding(namespace) < mayHold);
    if (index < 0) return undefined;
    const [namespace] = turn.splice(index, 1);
    if (namespace === undefined) return undefined;
    const queue = queues.get(namespace) ?? [];
    const job = queue.shift();
    if (queue.length > 0) turn.push(namespace);
    else queues.delete(namespace);
    return job;
  }

  function enqueue(input: TypeCheckInput, namespace: string, key: string): Promise<ScriptInspection> {
    if (closed) return Promise.reject(new Error("the type-check pool is closed"));
    const queue = queues.get(namespace) ?? [];
    if (queue.length >= options.queuePerNamespace)
      return Promise.reject(
        new TypeCheckQueueFullError(
          `namespace ${namespace} has ${queue.length} scripts waiting to be type-checked, as many as it may; try again shortly`,
        ),
      );
    return new Promise<ScriptInspection>((resolve, reject) => {
      queue.push({ id: nextId++, namespace, input, key, resolve, reject });
      if (!queues.has(namespace)) {
        queues.set(namespace, queue);
        turn.push(namespace);
      }
      dispatch();
    });
  }

  return {
    inspect(input, namespace = "default") {
      const key = answerKey(input);
      const found = remembered.get(key);
      if (found) return Promise.resolve(copy(found));
      // The same script started many times at once (a harness fanning out inputs) is one check.
      const pending = underWay.get(key);
      if (pending) return pending.then(copy);
      const check = enqueue(input, namespace, key);
      underWay.set(key, check);
      void check.finally(() => underWay.delete(key)).catch(() => undefined);
      return check.then(copy);
    },
    async ready() {
      await Promise.all(threads.map((thread) => thread.started));
    },
    get threadCount() {
      return threads.length;
    },
    async close() {
      closed = true;
      for (const queue of queues.values())
        for (const job of queue) job.reject(new Error("the type-check pool is closed"));
      queues.clear();
      turn.length = 0;
      await Promise.all(
        threads.map(async (thread) => {
          const job = thread.job;
          finish(thread);
          job?.reject(new Error("the type-check pool is closed"));
          await thread.worker.terminate().catch(() => undefined);
        }),
      );
    },
  };
}
