/**
 * One run's script, alive in an isolate between steps. It owns the seq counter, turns the
 * runtime's host calls into journal-ready calls, and runs a step under the CPU budget. A
 * session is only ever fed forward: its position (`consumedBatches`) is what the step cache
 * compares against, so a stale or out-of-order step falls back to a cold replay.
 */
import { createHash } from "node:crypto";
import type { CallEvent, EventBatch, IssuedCall, ToolErrorData, PinnedToolset } from "../shared/index.ts";
import { BUILTIN_TOOLS, EMPTY_CHAIN, MACHINE_BUSY_ERROR_TYPE, batchChain, type ScriptError } from "../shared/index.ts";
import { createCallGate, type GateVerdict, type SchemaValidator } from "./call-gate.ts";
import { createScriptIsolate, type EntryBudget, type IsolateFault, type ScriptIsolate } from "./isolate.ts";
import type { ReplayPacer } from "./replay-pacer.ts";
import { toolsModuleSource } from "./module-sources.ts";
import { RUNTIME_FILENAME } from "./runtime-source.ts";

export interface SessionOptions {
  runId: string;
  script: string;
  toolset: PinnedToolset;
  startedAt: number;
  /** Calls the workflow already knows of: replayed calls up to this seq are not reported. */
  knownCalls: number;
  /** The sandbox runtime the run started on (`SANDBOX_RUNTIME_VERSION`); decides the result's limit. */
  runtimeVersion: number;
  memoryMb: number;
  cpuMsPerStep: number;
  /** The wall-time backstop of an entry (default {@link DEFAULT_WALL_BACKSTOP}). */
  wallBackstop?: WallBackstop;
  validate: SchemaValidator;
}

/**
 * How long an entry may take in wall time: `perCpuMs` times the CPU time it may still use, plus
 * `extraMs`. isolated-vm's timeout counts wall time, which a busy machine stretches; the backstop
 * stops only an entry the machine could not give its CPU.
 */
export interface WallBackstop {
  perCpuMs: number;
  extraMs: number;
}

export const DEFAULT_WALL_BACKSTOP: WallBackstop = { perCpuMs: 10, extraMs: 1_000 };

/**
 * Thrown by a step whose entry ran into the wall-time backstop within its CPU time: the machine,
 * not the script, is at fault, so the step is taken again later (`MACHINE_BUSY_ERROR_TYPE`)
 * instead of failing the run. The session is disposed; the next step replays it.
 */
export class MachineBusyError extends Error {
  override name = MACHINE_BUSY_ERROR_TYPE;
}

export type Settlement = { ok: true; value: unknown } | { ok: false; error: ScriptError };

const MAX_LOG_LINES = 200;
const MAX_LOG_CHARS = 2000;
/**
 * Bytes of JSON one step may hand the workflow: its calls' arguments and its result together.
 * The workflow task that records a step also schedules its calls and emits its result, so each
 * goes twice into one request, and Temporal refuses requests over 4 MiB (logs add up to ~1 MB):
 * past that the run would be terminated instead of failed.
 */
export const MAX_STEP_BYTES = 1024 * 1024;
/**
 * Bytes of JSON a script's result may be. Runtime 1 counted it against the step's 1 MiB (a run's
 * result went into history inline); from runtime 2 it is stored outside history when large, so
 * it has a limit of its own. Runs keep the limit of the runtime they started on.
 */
export function maxResultBytes(runtimeVersion: number): number {
  return runtimeVersion <= 1 ? MAX_STEP_BYTES : 16 * 1024 * 1024;
}
/** Calls one step may issue: each costs the workflow task time, and it has 5 s in all. */
export const MAX_STEP_CALLS = 1000;
/** Nesting of arguments and results: the host's JSON.stringify gives up a few thousand deep. */
export const MAX_JSON_DEPTH = 512;

/** How deeply `json` nests arrays and objects, counted without parsing it again. */
export function jsonDepth(json: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return max;
}

function seedFrom(runId: string): number[] {
  const digest = createHash("sha256").update(runId).digest();
  return [0, 4, 8, 12].map((offset) => digest.readUInt32LE(offset));
}

/** Keeps the script's frames and drops the runtime's own. */
function cleanStack(stack: string | undefined): string | undefined {
  if (!stack) return undefined;
  return stack
    .split("\n")
    .filter(
      (line) => !line.includes(RUNTIME_FILENAME) && !line.includes("rewind:entry") && !line.includes("rewind:internal"),
    )
    .join("\n");
}

/**
 * A sleep this long makes the script's isolate cost more kept warm than replayed: a sleeping run
 * holds no isolate, and replaying even 5,000 completions costs about a hundred ms against 10 s.
 */
export const LONG_WAIT_MS = 10_000;

function isLongWait(tool: string, args: unknown): boolean {
  if (tool !== BUILTIN_TOOLS.sleep || typeof args !== "object" || args === null || !("ms" in args)) return false;
  return typeof args.ms === "number" && args.ms >= LONG_WAIT_MS;
}

/** Thrown by a cold replay's synchronous entry cut at its cap: the replay is made again, asynchronously. */
export class SyncEntryCut extends Error {
  override name = "SyncEntryCut";
  constructor() {
    super("a synchronous entry of a replay ran past its cap; the replay is made again on isolated-vm's threads");
  }
}

export class ScriptSession {
  consumedBatches = 0;
  /** `batchChain` of every batch fed so far. */
  chain = EMPTY_CHAIN;
  /** Seqs of the batch fed last (none before the first): a speculative step taken next follows them. */
  lastFedSeqs: number[] = [];
  /** When the sandbox last kept this session warm (wall clock): an idle one is given back. */
  keptAt = 0;
  /** Time of the last batch fed (the run's start before any): a script's clock never goes back. */
  lastAt: number;
  private seq = 0;
  /** Calls issued and not fed back yet, by seq: whether each is a long wait (see {@link LONG_WAIT_MS}). */
  private readonly open = new Map<number, boolean>();
  private newCalls: IssuedCall[] = [];
  private logs: string[] = [];
  private settlement: Settlement | undefined;
  private stepCpuStart = 0;
  private stepBytes = 0;
  private stepCalls = 0;
  private isolate: ScriptIsolate | undefined;
  private readonly gate: ReturnType<typeof createCallGate>;
  private readonly options: SessionOptions;

  private constructor(options: SessionOptions) {
    this.options = options;
    this.lastAt = options.startedAt;
    this.gate = createCallGate(options.toolset, options.validate);
  }

  static async create(options: SessionOptions): Promise<ScriptSession> {
    const session = new ScriptSession(options);
    session.isolate = await createScriptIsolate({
      memoryMb: options.memoryMb,
      scriptSource: options.script,
      toolsSource: toolsModuleSource(options.toolset),
      onHostCall: (op, payload) => session.onHostCall(op, payload),
    });
    return session;
  }

  get settled(): Settlement | undefined {
    return this.settlement;
  }

  get disposed(): boolean {
    return this.isolate?.disposed ?? true;
  }

  /** Resets what one step reports, and its CPU budget. */
  beginStep(): void {
    this.newCalls = [];
    this.logs = [];
    this.resetBudget();
  }

  /** Gives the next entries into the isolate a full step's CPU budget. */
  resetBudget(): void {
    this.stepCpuStart = this.isolate?.cpuTimeMs() ?? 0;
    this.stepBytes = 0;
    this.stepCalls = 0;
  }

  takeStepOutput(): { calls: IssuedCall[]; logs: string[] } {
    return { calls: this.newCalls, logs: this.logs };
  }

  async start(input: unknown): Promise<ScriptError | undefined> {
    return this.fault((await this.required().start(JSON.stringify(input ?? null), this.budget())) ?? this.overBudget());
  }

  /**
   * Feeds one batch, a completion an entry, on isolated-vm's threads; a cold replay passes its
   * pacer, which may have an entry made on this thread instead (then a `SyncEntryCut` is thrown
   * when one runs past the pacer's cap: the caller replays again without synchronous entries).
   * `eventJson`: the JSON of a batch's only event, when the caller already has it.
   */
  async feed(batch: EventBatch, pacer?: ReplayPacer, eventJson?: string): Promise<ScriptError | undefined> {
    const encoded = batch.events.length === 1 ? eventJson : undefined;
    for (const event of batch.events) {
      this.open.delete(event.seq);
      if (this.settlement) break;
      if (pacer?.due) await pacer.yield();
      const isolate = this.required();
      const json = encoded ?? JSON.stringify(event satisfies CallEvent);
      const budget = this.budget();
      const entered = pacer?.sync
        ? pacer.enter(
            () => isolate.feedSync(json, batch.at, budget, pacer.capMs),
            () => isolate.cpuTimeMs(),
          )
        : await isolate.feed(json, batch.at, budget);
      if (entered?.kind === "cut") {
        this.dispose();
        throw new SyncEntryCut();
      }
      const fault = this.fault(entered ?? this.overBudget());
      if (fault) return fault;
    }
    this.consumedBatches += 1;
    this.lastFedSeqs = batch.events.map((event) => event.seq);
    this.chain = batchChain(this.chain, batch.at, this.lastFedSeqs);
    this.lastAt = Math.max(this.lastAt, batch.at);
    return undefined;
  }

  /**
   * True when everything the script waits for is a long wait: a sleep of at least
   * {@link LONG_WAIT_MS}. Such a run gives its isolate back at once; its next step replays it.
   */
  get waitsOnlyLongly(): boolean {
    if (this.open.size === 0) return false;
    for (const long of this.open.values()) if (!long) return false;
    return true;
  }

  /** Heap the script's isolate uses, in bytes: read between steps, when the isolate is idle. */
  heapUsedBytes(): number {
    return this.isolate?.heapUsedBytes() ?? 0;
  }

  dispose(): void {
    this.isolate?.dispose();
  }

  private required(): ScriptIsolate {
    if (!this.isolate || this.isolate.disposed) throw new Error("script isolate is gone");
    return this.isolate;
  }

  private cpuUsed(): number {
    return (this.isolate?.cpuTimeMs() ?? 0) - this.stepCpuStart;
  }

  /**
   * What the next entry may take: the CPU time left of the step's, and a wall-time backstop well
   * past it (isolated-vm's timeout counts wall time, which a busy machine stretches: it only stops
   * a script that could not get its CPU time at all). The limit itself is the CPU time the
   * isolate used (the pool's ledger), checked during and after every entry, so a step is not
   * failed for time it spent waiting for a core.
   */
  private budget(): EntryBudget {
    const cpuMs = Math.max(1, this.options.cpuMsPerStep - this.cpuUsed());
    const backstop = this.options.wallBackstop ?? DEFAULT_WALL_BACKSTOP;
    return { cpuMs, wallMs: cpuMs * backstop.perCpuMs + backstop.extraMs };
  }

  private overBudget(): IsolateFault | undefined {
    return this.cpuUsed() > this.options.cpuMsPerStep ? { kind: "timeout" } : undefined;
  }

  /** What ends the step, if anything: a script's fault, or a `MachineBusyError` thrown. */
  private fault(fault: IsolateFault | undefined): ScriptError | undefined {
    const flooded = this.stepCalls > MAX_STEP_CALLS;
    if (!fault && !flooded) return undefined;
    const cpuUsed = this.cpuUsed();
    this.dispose();
    if (flooded || !fault)
      return {
        name: "LimitExceeded",
        limit: "calls",
        message: `the script issued more than ${MAX_STEP_CALLS} calls in one step`,
      };
    if (
      fault.kind === "timeout" ||
      ((fault.kind === "wall" || fault.kind === "cut") && cpuUsed > this.options.cpuMsPerStep)
    ) {
      return {
        name: "LimitExceeded",
        limit: "cpu",
        message: `the script used more than its CPU time limit of ${this.options.cpuMsPerStep} ms in one step`,
      };
    }
    if (fault.kind === "wall" || fault.kind === "cut") {
      throw new MachineBusyError(
        `the script's step got ${Math.round(cpuUsed)} ms of its ${this.options.cpuMsPerStep} ms of CPU time before its wall-time backstop: the machine is too busy; the step is taken again`,
      );
    }
    if (fault.kind === "memory") {
      return {
        name: "LimitExceeded",
        limit: "memory",
        message: `the script exceeded its memory limit of ${this.options.memoryMb} MB`,
      };
    }
    return { name: fault.error.name, message: fault.error.message };
  }

  private onHostCall(op: string, payload: string): string {
    switch (op) {
      case "options":
        return JSON.stringify({ startedAt: this.options.startedAt, seed: seedFrom(this.options.runId) });
      case "call":
        return this.onCall(payload);
      case "log":
        if (this.logs.length < MAX_LOG_LINES) {
          const { level, line } = JSON.parse(payload) as { level: string; line: string };
          this.logs.push(`[${level}] ${line.slice(0, MAX_LOG_CHARS)}`);
        }
        return "null";
      case "done": {
        const bytes = Buffer.byteLength(payload);
        const limit = maxResultBytes(this.options.runtimeVersion);
        const shared = this.options.runtimeVersion <= 1;
        const problem =
          shared && this.stepBytes + bytes > MAX_STEP_BYTES
            ? `is ${bytes} bytes of JSON, more than the ${MAX_STEP_BYTES - this.stepBytes} left of its step's limit of ${MAX_STEP_BYTES}`
            : !shared && bytes > limit
              ? `is ${bytes} bytes of JSON, more than the ${limit} a run's result may be`
              : jsonDepth(payload) > MAX_JSON_DEPTH
                ? `nests deeper than ${MAX_JSON_DEPTH} levels`
                : undefined;
        this.settlement = problem
          ? { ok: false, error: { name: "RangeError", message: `the script's result ${problem}` } }
          : { ok: true, value: JSON.parse(payload) as unknown };
        return "null";
      }
      case "failed": {
        const error = JSON.parse(payload) as ScriptError;
        this.settlement = { ok: false, error: { ...error, stack: cleanStack(error.stack) } };
        return "null";
      }
      default:
        return "null";
    }
  }

  private onCall(payload: string): string {
    const { tool, args } = JSON.parse(payload) as { tool: string; args: unknown };
    // Past the step's count of calls the step fails (see fault()); this call is not journaled.
    if (++this.stepCalls > MAX_STEP_CALLS)
      return JSON.stringify({
        refused: { code: "invalidArguments", message: `${tool}: too many calls in one step`, tool, seq: 0 },
      });
    const seq = ++this.seq;
    const bytes = Buffer.byteLength(payload);
    // Arguments that do not fit the step's budget are refused and not journaled: history could not hold them.
    const fits = this.stepBytes + bytes <= MAX_STEP_BYTES && jsonDepth(payload) <= MAX_JSON_DEPTH + 1;
    const verdict: GateVerdict = fits
      ? this.gate(tool, args, bytes)
      : {
          refused: {
            code: "invalidArguments",
            message: `${tool}: arguments of ${bytes} bytes of JSON exceed what is left of the step's ${MAX_STEP_BYTES} bytes, or nest deeper than ${MAX_JSON_DEPTH} levels`,
          },
        };
    if (fits) this.stepBytes += bytes;
    const refused: ToolErrorData | undefined = "refused" in verdict ? { ...verdict.refused, tool, seq } : undefined;
    if (!refused) this.open.set(seq, isLongWait(tool, "args" in verdict ? verdict.args : args));
    if (seq > this.options.knownCalls) {
      this.newCalls.push(
        refused
          ? { seq, tool, args: fits ? args : null, refused }
          : { seq, tool, args: "args" in verdict ? verdict.args : args },
      );
    }
    return JSON.stringify(refused ? { seq, refused } : { seq });
  }
}
