/**
 * The one file that runs code in a script's isolate (isolate-shell.ts only builds the isolate).
 * It loads the runtime and links the script's modules into a shell, and exposes the runtime's
 * entry points as plain functions with a time budget. Only an `ivm.Callback` (copied string
 * arguments, copied string result) ever crosses into the isolate; no Reference, ExternalCopy,
 * Isolate or Context does.
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
import { createIsolateShell, type HostCallHandler, type IsolateShell } from "./isolate-shell.ts";

export interface IsolateOptions {
  memoryMb: number;
  /** Answers the runtime's synchronous calls: `op` and a JSON payload in, a JSON string out. */
  onHostCall: HostCallHandler;
  scriptSource: string;
  toolsSource: string;
  /** A shell built ahead (with `memoryMb`), never used by another run; default: one built now. */
  shell?: IsolateShell | undefined;
}

/** Why an entry into the isolate did not return normally. */
export type IsolateFault = { kind: "timeout" } | { kind: "memory" } | { kind: "error"; error: Error };

export interface ScriptIsolate {
  /** Calls the script's default export with the run input (JSON). */
  start(inputJson: string, timeoutMs: number): Promise<IsolateFault | undefined>;
  /** Settles one call's promise, at workflow time `at`, and drains the microtasks that follow. */
  feed(eventJson: string, at: number, timeoutMs: number): Promise<IsolateFault | undefined>;
  /**
   * What `feed` does, on the calling thread: isolated-vm's `applySync` runs the same call and the
   * same microtask checkpoint as `apply`, without the hop to a thread of its pool and back (a few
   * µs against ~100). It holds the event loop while the script runs: see ReplayPacer.
   */
  feedSync(eventJson: string, at: number, timeoutMs: number): IsolateFault | undefined;
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
  let shell = options.shell;
  if (shell && shell.memoryMb !== options.memoryMb) {
    shell.isolate.dispose();
    shell = undefined;
  }
  shell ??= await createIsolateShell(options.memoryMb);
  const { isolate, context } = shell;
  try {
    shell.bind(options.onHostCall);
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

    const enter = async (
      ref: ivm.Reference,
      args: (string | number)[],
      timeoutMs: number,
    ): Promise<IsolateFault | undefined> => {
      try {
        await ref.apply(undefined, args, { timeout: Math.max(1, Math.ceil(timeoutMs)) });
        return undefined;
      } catch (error) {
        return classify(isolate, error);
      }
    };

    const enterSync = (ref: ivm.Reference, args: (string | number)[], timeoutMs: number): IsolateFault | undefined => {
      try {
        ref.applySync(undefined, args, { timeout: Math.max(1, Math.ceil(timeoutMs)) });
        return undefined;
      } catch (error) {
        return classify(isolate, error);
      }
    };

    return {
      async start(inputJson, timeoutMs) {
        try {
          await entry.evaluate({ timeout: Math.max(1, Math.ceil(timeoutMs)) });
        } catch (error) {
          return classify(isolate, error);
        }
        return enter(startRef, [inputJson], timeoutMs);
      },
      feed: (eventJson, at, timeoutMs) => enter(feedRef, [eventJson, at], timeoutMs),
      feedSync: (eventJson, at, timeoutMs) => enterSync(feedRef, [eventJson, at], timeoutMs),
      cpuTimeMs: () => (isolate.isDisposed ? 0 : Number(isolate.cpuTime) / 1e6),
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
