/**
 * The one file that runs code in a script's isolate (isolate-shell.ts only builds the isolate).
 * It loads the runtime and links the script's modules into a shell, and exposes the runtime's
 * entry points as plain functions with a time budget. Only an `ivm.Callback` (copied string
 * arguments, copied string result) ever crosses into the isolate; no Reference, ExternalCopy,
 * Isolate or Context does. It keeps the isolate's CPU time itself: the kernel's count of the
 * calling thread for a synchronous entry, the pool's share (pool-cpu-ledger.ts) for the others.
 */
import type ivm from "isolated-vm";
import {
  ENTRY_MODULE_SOURCE,
  ENTRY_SPECIFIER,
  INTERNAL_MODULE_SOURCE,
  INTERNAL_SPECIFIER,
  SCRIPT_SPECIFIER,
  TOOLS_SPECIFIER,
} from "./module-sources.ts";
import { createIsolateShell, type HostCallHandler } from "./isolate-shell.ts";
import { poolCpuLedger } from "./pool-cpu-ledger.ts";

export interface IsolateOptions {
  memoryMb: number;
  /** Answers the runtime's synchronous calls: `op` and a JSON payload in, a JSON string out. */
  onHostCall: HostCallHandler;
  scriptSource: string;
  toolsSource: string;
}

/**
 * Why an entry into the isolate did not return normally. `timeout`: past its CPU time; `wall`:
 * past its wall-time backstop with CPU time to spare (a machine too busy to give it the CPU);
 * `cut`: a synchronous entry ran past its wall-time cap, and was stopped though its script may be
 * within its limits. After any of them the isolate is lost.
 */
export type IsolateFault =
  { kind: "timeout" } | { kind: "wall" } | { kind: "memory" } | { kind: "cut" } | { kind: "error"; error: Error };

/** What one entry may take: CPU time (the limit) and wall time (a backstop), in ms. */
export interface EntryBudget {
  cpuMs: number;
  wallMs: number;
}

/**
 * CPU time of the calling thread, in ms, where Node has it (24 does, 22 does not): a
 * synchronous entry's own cost, which a busy machine does not stretch.
 */
export const threadCpuMs: (() => number) | undefined =
  "threadCpuUsage" in process
    ? () => {
        const { user, system } = process.threadCpuUsage();
        return (user + system) / 1000;
      }
    : undefined;

export interface ScriptIsolate {
  /** Calls the script's default export with the run input (JSON), on isolated-vm's threads. */
  start(inputJson: string, budget: EntryBudget): Promise<IsolateFault | undefined>;
  /**
   * Settles one call's promise, at workflow time `at`, and drains the microtasks that follow, on
   * isolated-vm's threads: the event loop goes on meanwhile, and the entry is stopped once its CPU
   * time passes `budget.cpuMs`.
   */
  feed(eventJson: string, at: number, budget: EntryBudget): Promise<IsolateFault | undefined>;
  /**
   * What `feed` does, on the calling thread: isolated-vm's `applySync` runs the same call and the
   * same microtask checkpoint as `apply`, without the hop to a thread of its pool and back (a few
   * µs against ~100). It holds the event loop while the script runs, so it is cut after
   * `capMs` of wall time (`{ kind: "cut" }`), within limits or not: see ReplayPacer.
   */
  feedSync(eventJson: string, at: number, budget: EntryBudget, capMs: number): IsolateFault | undefined;
  /** CPU time the isolate has used so far, in ms. */
  cpuTimeMs(): number;
  /** Heap the isolate uses now, in bytes (V8's heap and what counts against its limit outside it); 0 once disposed. Call it between entries: it waits for the isolate. */
  heapUsedBytes(): number;
  readonly disposed: boolean;
  dispose(): void;
}

/** Thrown when the script's modules can't be compiled or linked: a fault of the script. */
export class ScriptLoadError extends Error {
  override name = "ScriptLoadError";
}

function classify(isolate: ivm.Isolate, error: unknown): IsolateFault {
  const message = error instanceof Error ? error.message : String(error);
  if (isolate.isDisposed || /memory limit/i.test(message)) return { kind: "memory" };
  if (/timed out/i.test(message)) return { kind: "timeout" };
  return { kind: "error", error: error instanceof Error ? error : new Error(message) };
}

export async function createScriptIsolate(options: IsolateOptions): Promise<ScriptIsolate> {
  const shell = await createIsolateShell(options.memoryMb, options.onHostCall);
  const { isolate, context } = shell;
  try {
    // The runtime and the two modules of ours are small and known: loaded on this thread, they
    // save a hop to isolated-vm's threads and back each. The script's own are compiled there.
    const control = shell.runtime.runSync(context, { reference: true }) as ivm.Reference;
    const startRef = control.getSync("start", { reference: true }) as ivm.Reference;
    const feedRef = control.getSync("feed", { reference: true }) as ivm.Reference;

    const compile = async (code: string, filename: string): Promise<ivm.Module> => {
      try {
        return await isolate.compileModule(code, { filename });
      } catch (error) {
        throw new ScriptLoadError(error instanceof Error ? error.message : String(error));
      }
    };
    const script = await compile(options.scriptSource, SCRIPT_SPECIFIER);
    const tools = await compile(options.toolsSource, TOOLS_SPECIFIER);
    const internal = isolate.compileModuleSync(INTERNAL_MODULE_SOURCE, { filename: INTERNAL_SPECIFIER });
    const entry = isolate.compileModuleSync(ENTRY_MODULE_SOURCE, { filename: ENTRY_SPECIFIER });
    // The internal module is reachable only from the entry and rewind:tools; a script that
    // imports anything but rewind:tools fails to link with a message saying so.
    await entry.instantiate(context, (specifier, referrer) => {
      if (specifier === TOOLS_SPECIFIER) return tools;
      if (specifier === INTERNAL_SPECIFIER && (referrer === entry || referrer === tools)) return internal;
      if (specifier === SCRIPT_SPECIFIER && referrer === entry) return script;
      throw new ScriptLoadError(`cannot import "${specifier}": scripts may import only "rewind:tools"`);
    });

    /** CPU time of the entries so far, in ms. */
    let cpuMs = 0;
    const timeoutOf = (ms: number) => Math.max(1, Math.ceil(ms));

    /** An entry on isolated-vm's threads, charged by the pool's ledger and stopped past its CPU time. */
    const metered = async (run: (timeout: number) => Promise<unknown>, budget: EntryBudget) => {
      const entry = poolCpuLedger.begin(isolate, budget.cpuMs, () => {
        if (!isolate.isDisposed) isolate.dispose();
      });
      try {
        await run(timeoutOf(budget.wallMs));
        return undefined;
      } catch (error) {
        if (entry.overBudget) return { kind: "timeout" } as const;
        const fault = classify(isolate, error);
        return fault.kind === "timeout" ? ({ kind: "wall" } as const) : fault;
      } finally {
        cpuMs += entry.end();
      }
    };

    const enterSync = (
      ref: ivm.Reference,
      args: (string | number)[],
      budget: EntryBudget,
      capMs: number,
    ): IsolateFault | undefined => {
      const clock = threadCpuMs;
      const began = clock?.() ?? 0;
      const wallBegan = isolate.wallTime;
      try {
        ref.applySync(undefined, args, { timeout: timeoutOf(Math.min(budget.wallMs, capMs)) });
        return undefined;
      } catch (error) {
        const fault = classify(isolate, error);
        if (fault.kind !== "timeout") return fault;
        // Stopped by the cap, or by the backstop: the CPU time decides after the entry (the session's check).
        return capMs < budget.wallMs ? { kind: "cut" } : { kind: "wall" };
      } finally {
        cpuMs += clock ? clock() - began : Number(isolate.isDisposed ? 0n : isolate.wallTime - wallBegan) / 1e6;
      }
    };

    return {
      async start(inputJson, budget) {
        const evaluated = await metered((timeout) => entry.evaluate({ timeout }), budget);
        if (evaluated) return evaluated;
        const left = { cpuMs: budget.cpuMs - cpuMs, wallMs: budget.wallMs };
        return metered((timeout) => startRef.apply(undefined, [inputJson], { timeout }), left);
      },
      feed: (eventJson, at, budget) =>
        metered((timeout) => feedRef.apply(undefined, [eventJson, at], { timeout }), budget),
      feedSync: (eventJson, at, budget, capMs) => enterSync(feedRef, [eventJson, at], budget, capMs),
      cpuTimeMs: () => cpuMs,
      heapUsedBytes() {
        if (isolate.isDisposed) return 0;
        const heap = isolate.getHeapStatisticsSync();
        return heap.used_heap_size + heap.externally_allocated_size;
      },
      get disposed() {
        return isolate.isDisposed;
      },
      dispose() {
        if (!isolate.isDisposed) isolate.dispose();
      },
    };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}
