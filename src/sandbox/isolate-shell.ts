/**
 * The part of a script's isolate that is the same for every run: the isolate with its heap
 * limit, an empty context whose global holds the host callback, and the runtime compiled (not
 * run: it reads the run's options as it starts), with the run's host-call handler on the global.
 */
import ivm from "isolated-vm";
import { RUNTIME_FILENAME, RUNTIME_SOURCE } from "./runtime-source.ts";

export type HostCallHandler = (op: string, payload: string) => string;

export interface IsolateShell {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  /** RUNTIME_SOURCE, compiled in this isolate; run once, in `context`. */
  readonly runtime: ivm.Script;
}

/**
 * V8's code cache of the runtime, made by the first shell of the process: later ones
 * deserialize its compiled code instead of parsing and compiling the source again. V8 checks
 * the cache against the source and its own version and flags, and compiles from source when
 * it doesn't match.
 */
let runtimeCache: ivm.ExternalCopy<ArrayBuffer> | undefined;

export async function createIsolateShell(memoryMb: number, handler: HostCallHandler): Promise<IsolateShell> {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  try {
    const context = await isolate.createContext();
    await context.global.set("__rewindHost", new ivm.Callback(handler));
    const cached = runtimeCache;
    const runtime = (await isolate.compileScript(RUNTIME_SOURCE, {
      filename: RUNTIME_FILENAME,
      ...(cached ? { cachedData: cached } : { produceCachedData: true }),
    })) as ivm.Script & ivm.CachedDataResult;
    if (!cached && runtime.cachedData) runtimeCache = runtime.cachedData;
    return { isolate, context, runtime };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}
