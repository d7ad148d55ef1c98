/**
 * The sandbox as the `advance` activity sees it: run one step of a run's script. Warm sessions
 * are kept per run in a bounded LRU and fed only the batches they have not seen; when the
 * session is missing or was fed anything but what the workflow's journal says (its chain), the
 * step asks the workflow for a cold start and replays the script from its journal. A session
 * that hit a limit or settled is dropped. `speculate` lets the activity that finished a call
 * feed it at once, and hand the step back with the call's result (a `SpeculativeStep`). Warm steps
 * enter the isolate on isolated-vm's threads; a cold replay enters it on this thread, in slices
 * that let the event loop run, each entry cut short of holding it long (replay-pacer.ts).
 *
 * A speculative step is only worth taking if it follows every completion the workflow will see
 * before it: once one of a run's completions is not fed here (its step could not wait its turn,
 * or it failed), no later one is fed speculatively until the workflow has fed that one, or the
 * session would have seen the results in another order than the journal, and its next step
 * would be a cold replay.
 */
import type {
  CallEvent,
  EventBatch,
  AdvanceInput,
  AdvanceResult,
  ColdStart,
  ScriptError,
  SpeculativeStep,
  StepResult,
} from "../shared/index.ts";
import type { SchemaValidator } from "./call-gate.ts";
import { ScriptLoadError } from "./isolate.ts";
import { DEFAULT_PACING, ReplayPacer } from "./replay-pacer.ts";
import { ScriptSession, SyncEntryCut, type WallBackstop } from "./script-session.ts";
import { RUNTIME_VERSION_ERROR_TYPE, SANDBOX_RUNTIME_VERSION, runtimeVersionOf } from "../shared/index.ts";
import type { StepMetrics } from "../metrics/index.ts";

/** Thrown (and retried by Temporal, on another worker) for a run whose runtime this worker lacks. */
export class RuntimeVersionError extends Error {
  override name = RUNTIME_VERSION_ERROR_TYPE;
  constructor(version: number) {
    super(
      `the run started on sandbox runtime ${version}; this worker has runtime ${SANDBOX_RUNTIME_VERSION} and can't step it`,
    );
  }
}

export interface SandboxOptions {
  memoryMb: number;
  cpuMsPerStep: number;
  /** Warm sessions kept; 0 replays every step from the journal. */
  warmSessions: number;
  /**
   * A warm session not stepped for this long gives its isolate back (default 30 s; 0: never): a
   * run parked, waiting for a signal or a long call holds no isolate. A run that sleeps at least
   * `LONG_WAIT_MS` gives it back as soon as its step ends.
   */
  warmIdleMs?: number;
  /**
   * How long a speculative step waits for the run's other steps (default 1 s): it counts
   * against the call's timeout, so past this the workflow feeds the call instead.
   */
  speculativeStepWaitMs?: number;
  /** The wall-time backstop of an entry into a script (default `DEFAULT_WALL_BACKSTOP`). */
  wallBackstop?: WallBackstop;
  validate: SchemaValidator;
  /** Where each step's duration goes; default: nowhere. */
  metrics?: StepMetrics;
}

export interface Sandbox {
  advance(input: AdvanceInput): Promise<AdvanceResult>;
  /**
   * Takes a speculative step: feeds one completion to the run's warm session, after any step in
   * progress; undefined when the run has no warm session here (the workflow then feeds the call
   * itself). `eventJson`, when given, is `JSON.stringify(event)` already made by the caller
   * (`encodeCallEvent`), so a large result is not serialized twice.
   */
  speculate(runId: string, event: CallEvent, eventJson?: string): Promise<SpeculativeStep | undefined>;
  /**
   * A completion of the run that will not be fed speculatively (a failed attempt): until the
   * workflow has fed `seq` to the session, no other result of the run is.
   */
  notSpeculated(runId: string, seq: number): void;
  /**
   * Disposes the run's warm session, unless a step of it is in progress: the run will not step
   * here (the API took its first step, and then could not start it).
   */
  forget(runId: string): void;
  /** Warm sessions currently held. */
  readonly warmCount: number;
  /** Heap used by the warm sessions' isolates, in bytes (they are idle: a session is out of the warm set while it steps). */
  heapUsedBytes(): number;
  dispose(): void;
}

const SPECULATIVE_STEP_WAIT_MS = 1_000;
const DEFAULT_WARM_IDLE_MS = 30_000;

export function createSandbox(options: SandboxOptions): Sandbox {
  return new WarmSandbox(options);
}

/** The sandbox of the header: the runs' warm sessions, whose steps take turns, and what each is owed. */
class WarmSandbox implements Sandbox {
  private readonly options: SandboxOptions;
  private readonly warm = new Map<string, ScriptSession>();
  /** Runs whose session is being stepped: feeding is asynchronous, and steps must not interleave. */
  private readonly stepping = new Map<string, Promise<void>>();
  /** Per run, the completions the workflow feeds that its warm session has not seen yet (see the header). */
  private readonly owed = new Map<string, Set<number>>();
  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(options: SandboxOptions) {
    this.options = options;
    const idleMs = options.warmIdleMs ?? DEFAULT_WARM_IDLE_MS;
    this.sweeper =
      idleMs > 0 ? setInterval(() => this.dropIdle(idleMs), Math.max(50, Math.min(idleMs / 2, 5_000))) : undefined;
    this.sweeper?.unref();
  }

  readonly advance = async (input: AdvanceInput): Promise<AdvanceResult> => {
    const release = await this.acquire(input.runId, Number.POSITIVE_INFINITY);
    try {
      const began = performance.now();
      const result = await this.advanceNow(input);
      if (result.kind === "needsColdStart") return result;
      this.options.metrics?.step(input.cold ? "cold" : "warm", (performance.now() - began) / 1000);
      const fedAt = input.batches.at(-1)?.at;
      return {
        ...result,
        ...(fedAt === undefined ? {} : { fedAt }),
        ...(input.cold && input.consumedBatches === 0 ? { startedAt: input.cold.startedAt } : {}),
      };
    } finally {
      release?.();
    }
  };

  // Steps of one run take turns: every result of a run on this worker is fed in the order the
  // worker got them, and the workflow puts the steps back in that order (see SpeculativeSteps).
  readonly speculate = async (
    runId: string,
    event: CallEvent,
    eventJson?: string,
  ): Promise<SpeculativeStep | undefined> => {
    const release = await this.acquire(runId, this.options.speculativeStepWaitMs ?? SPECULATIVE_STEP_WAIT_MS);
    if (!release) {
      this.owe(runId, event.seq);
      return undefined;
    }
    try {
      const began = performance.now();
      const step = await this.speculateNow(runId, event, eventJson);
      if (step) this.options.metrics?.step("warm", (performance.now() - began) / 1000);
      return step;
    } finally {
      release();
    }
  };

  readonly notSpeculated = (runId: string, seq: number): void => {
    if (this.warm.has(runId) || this.stepping.has(runId)) this.owe(runId, seq);
  };

  readonly forget = (runId: string): void => {
    if (!this.stepping.has(runId)) this.drop(runId);
  };

  get warmCount(): number {
    return this.warm.size;
  }

  readonly heapUsedBytes = (): number => {
    let bytes = 0;
    for (const session of this.warm.values()) bytes += session.heapUsedBytes();
    return bytes;
  };

  readonly dispose = (): void => {
    clearInterval(this.sweeper);
    for (const runId of [...this.warm.keys()]) this.drop(runId);
  };

  private owe(runId: string, seq: number): void {
    const seqs = this.owed.get(runId);
    if (seqs) seqs.add(seq);
    else this.owed.set(runId, new Set([seq]));
  }

  private paid(runId: string, batches: readonly EventBatch[]): void {
    const seqs = this.owed.get(runId);
    if (!seqs) return;
    for (const batch of batches) for (const event of batch.events) seqs.delete(event.seq);
    if (seqs.size === 0) this.owed.delete(runId);
  }

  /** Takes the run's turn to step; undefined if it isn't free within `maxWaitMs`. */
  private async acquire(runId: string, maxWaitMs: number): Promise<(() => void) | undefined> {
    const deadline = Date.now() + maxWaitMs;
    for (let busy = this.stepping.get(runId); busy; busy = this.stepping.get(runId)) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      if (left === Number.POSITIVE_INFINITY) await busy;
      else {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          busy,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, left);
          }),
        ]);
        clearTimeout(timer);
      }
    }
    let release = (): void => undefined;
    this.stepping.set(
      runId,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    return () => {
      this.stepping.delete(runId);
      release();
    };
  }

  private drop(runId: string): void {
    this.warm.get(runId)?.dispose();
    this.warm.delete(runId);
    this.owed.delete(runId);
  }

  private keep(runId: string, session: ScriptSession): void {
    if (this.options.warmSessions === 0 || session.waitsOnlyLongly) return session.dispose();
    this.warm.delete(runId);
    session.keptAt = Date.now();
    this.warm.set(runId, session);
    while (this.warm.size > this.options.warmSessions) {
      const oldest = this.warm.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
  }

  /** Drops the sessions kept more than `idleMs` ago. */
  private dropIdle(idleMs: number): void {
    // The warm set is in the order sessions were kept (oldest first): the sweep stops at the first one still in use.
    const cutoff = Date.now() - idleMs;
    for (const [runId, session] of this.warm) {
      if (session.keptAt > cutoff) break;
      this.drop(runId);
    }
  }

  private async coldSession(runId: string, cold: ColdStart): Promise<ScriptSession | ScriptError> {
    const version = runtimeVersionOf(cold);
    // A run started by a newer release, reaching an older worker: another worker must take it.
    if (version > SANDBOX_RUNTIME_VERSION) throw new RuntimeVersionError(version);
    try {
      return await this.replayed(runId, cold, version, true);
    } catch (error) {
      if (!(error instanceof SyncEntryCut)) throw error;
      // An entry too long for this thread: the same replay, every entry on isolated-vm's threads.
      return await this.replayed(runId, cold, version, false);
    }
  }

  /** A new session of the run, started and fed its journal: a script's fault, or the session. */
  private async replayed(
    runId: string,
    cold: ColdStart,
    version: number,
    synchronous: boolean,
  ): Promise<ScriptSession | ScriptError> {
    let session: ScriptSession;
    try {
      session = await ScriptSession.create({
        runId,
        script: cold.script,
        toolset: cold.toolset,
        startedAt: cold.startedAt,
        knownCalls: cold.knownCalls,
        runtimeVersion: version,
        memoryMb: this.options.memoryMb,
        cpuMsPerStep: this.options.cpuMsPerStep,
        ...(this.options.wallBackstop ? { wallBackstop: this.options.wallBackstop } : {}),
        validate: this.options.validate,
      });
    } catch (error) {
      if (error instanceof ScriptLoadError) return { name: "SyntaxError", message: error.message };
      throw error;
    }
    session.beginStep();
    const pacer = new ReplayPacer({ ...DEFAULT_PACING, synchronous });
    const fault = (await session.start(cold.input)) ?? (await this.replay(session, cold, pacer));
    return fault ?? session;
  }

  private async replay(session: ScriptSession, cold: ColdStart, pacer: ReplayPacer): Promise<ScriptError | undefined> {
    for (const batch of cold.history) {
      // Each batch of the past gets the budget of the step it was first fed in.
      session.resetBudget();
      const fault = await session.feed(batch, pacer);
      if (fault) return fault;
    }
    return undefined;
  }

  /** What a session reports at the end of a step; it is kept warm while its script waits. */
  private finishStep(runId: string, session: ScriptSession): StepResult {
    const output = session.takeStepOutput();
    const settled = session.settled;
    if (!settled) {
      this.keep(runId, session);
      return { kind: "waiting", ...output };
    }
    session.dispose();
    this.owed.delete(runId);
    return settled.ok
      ? { kind: "done", result: settled.value, ...output }
      : { kind: "failed", error: settled.error, ...output };
  }

  private async advanceNow(input: AdvanceInput): Promise<AdvanceResult> {
    let session = this.warm.get(input.runId);
    // A cold step is a retry of the first step or a replay: a warm session left by an earlier
    // attempt has already reported its calls, and reusing it would report none.
    const stale =
      session &&
      (input.cold ||
        session.consumedBatches !== input.consumedBatches ||
        (input.chain !== undefined && session.chain !== input.chain) ||
        session.disposed ||
        session.settled);
    if (stale) {
      // Not `drop`: what the workflow owes the run's next session is owed the cold one too.
      session?.dispose();
      session = undefined;
    }
    this.warm.delete(input.runId);
    if (!session) {
      if (!input.cold) return { kind: "needsColdStart" };
      const created = await this.coldSession(input.runId, input.cold);
      this.paid(input.runId, input.cold.history);
      if (!(created instanceof ScriptSession)) return { kind: "failed", error: created, calls: [], logs: [] };
      session = created;
      session.resetBudget();
    } else {
      session.beginStep();
    }

    this.paid(input.runId, input.batches);
    for (const batch of input.batches) {
      const fault = await session.feed(batch);
      if (fault) return { kind: "failed", error: fault, ...session.takeStepOutput() };
    }
    return this.finishStep(input.runId, session);
  }

  private async speculateNow(
    runId: string,
    event: CallEvent,
    eventJson?: string,
  ): Promise<SpeculativeStep | undefined> {
    const session = this.warm.get(runId);
    if (!session || session.disposed || session.settled) return undefined;
    const seqs = this.owed.get(runId);
    if (seqs && (seqs.size > 1 || !seqs.has(event.seq))) {
      this.owe(runId, event.seq);
      return undefined;
    }
    // A retried call's own result: this is the completion that was owed.
    this.owed.delete(runId);
    const chain = session.chain;
    const after = session.lastFedSeqs;
    const at = Math.max(Date.now(), session.lastAt);
    this.warm.delete(runId);
    session.beginStep();
    const fault = await session.feed({ at, events: [event] }, undefined, eventJson);
    if (fault) return { chain, after, at, result: { kind: "failed", error: fault, ...session.takeStepOutput() } };
    return { chain, after, at, result: this.finishStep(runId, session) };
  }
}
