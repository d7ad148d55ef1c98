/**
 * The sandbox as the `advance` activity sees it: run one step of a run's script. Warm sessions
 * are kept per run in a bounded LRU and fed only the batches they have not seen; when the
 * session is missing or was fed anything but what the workflow's journal says (its chain), the
 * step asks the workflow for a cold start and replays the script from its journal. A session
 * that hit a limit or settled is dropped. `prestep` lets the activity that finished a call feed
 * it at once, and hand the step back with the call's result (see `Prestep`).
 */
import type { CallEvent } from "../shared/journal.ts";
import type { AdvanceInput, AdvanceResult, ColdStart, Prestep, ScriptError } from "../shared/step.ts";
import type { SchemaValidator } from "./call-gate.ts";
import { ScriptLoadError } from "./isolate.ts";
import { ScriptSession } from "./script-session.ts";

export interface SandboxOptions {
  memoryMb: number;
  cpuMsPerStep: number;
  /** Warm sessions kept; 0 replays every step from the journal. */
  warmSessions: number;
  validate: SchemaValidator;
}

export interface Sandbox {
  advance(input: AdvanceInput): Promise<AdvanceResult>;
  /**
   * Feeds one completion to the run's warm session, after any step in progress; undefined when
   * the run has no warm session here (the workflow then feeds the call itself).
   */
  prestep(runId: string, event: CallEvent): Promise<Prestep | undefined>;
  /** Warm sessions currently held. */
  readonly warmCount: number;
  dispose(): void;
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const warm = new Map<string, ScriptSession>();
  /** Runs whose session is being stepped: feeding is asynchronous, and steps must not interleave. */
  const stepping = new Map<string, Promise<void>>();

  async function exclusively<T>(runId: string, work: () => Promise<T>): Promise<T> {
    while (stepping.has(runId)) await stepping.get(runId);
    let release = (): void => undefined;
    stepping.set(runId, new Promise<void>((resolve) => { release = resolve; }));
    try {
      return await work();
    } finally {
      stepping.delete(runId);
      release();
    }
  }

  const drop = (runId: string): void => {
    warm.get(runId)?.dispose();
    warm.delete(runId);
  };

  const keep = (runId: string, session: ScriptSession): void => {
    if (options.warmSessions === 0) return session.dispose();
    warm.delete(runId);
    warm.set(runId, session);
    while (warm.size > options.warmSessions) {
      const oldest = warm.keys().next().value;
      if (oldest === undefined) break;
      drop(oldest);
    }
  };

  async function coldSession(runId: string, cold: ColdStart): Promise<ScriptSession | ScriptError> {
    let session: ScriptSession;
    try {
      session = await ScriptSession.create({
        runId, script: cold.script, toolset: cold.toolset, startedAt: cold.startedAt, knownCalls: cold.knownCalls,
        memoryMb: options.memoryMb, cpuMsPerStep: options.cpuMsPerStep, validate: options.validate,
      });
    } catch (error) {
      if (error instanceof ScriptLoadError) return { name: "SyntaxError", message: error.message };
      throw error;
    }
    session.beginStep();
    const fault = (await session.start(cold.input)) ?? (await replay(session, cold));
    return fault ?? session;
  }

  async function replay(session: ScriptSession, cold: ColdStart): Promise<ScriptError | undefined> {
    for (const batch of cold.history) {
      // Each batch of the past gets the budget of the step it was first fed in.
      session.resetBudget();
      const fault = await session.feed(batch);
      if (fault) return fault;
    }
    return undefined;
  }

  /** What a session reports at the end of a step; it is kept warm while its script waits. */
  function finishStep(runId: string, session: ScriptSession): Exclude<AdvanceResult, { kind: "needsColdStart" }> {
    const output = session.takeStepOutput();
    const settled = session.settled;
    if (!settled) {
      keep(runId, session);
      return { kind: "waiting", ...output };
    }
    session.dispose();
    return settled.ok ? { kind: "done", result: settled.value, ...output } : { kind: "failed", error: settled.error, ...output };
  }

  async function advanceNow(input: AdvanceInput): Promise<AdvanceResult> {
    let session = warm.get(input.runId);
    // A cold step is a retry of the first step or a replay: a warm session left by an earlier
    // attempt has already reported its calls, and reusing it would report none.
    const stale = session && (input.cold || session.consumedBatches !== input.consumedBatches || (input.chain !== undefined && session.chain !== input.chain) || session.disposed || session.settled);
    if (stale) {
      drop(input.runId);
      session = undefined;
    }
    warm.delete(input.runId);
    if (!session) {
      if (!input.cold) return { kind: "needsColdStart" };
      const created = await coldSession(input.runId, input.cold);
      if (!(created instanceof ScriptSession)) return { kind: "failed", error: created, calls: [], logs: [] };
      session = created;
      session.resetBudget();
    } else {
      session.beginStep();
    }

    for (const batch of input.batches) {
      const fault = await session.feed(batch);
      if (fault) return { kind: "failed", error: fault, ...session.takeStepOutput() };
    }
    return finishStep(input.runId, session);
  }

  async function prestepNow(runId: string, event: CallEvent): Promise<Prestep | undefined> {
    const session = warm.get(runId);
    if (!session || session.disposed || session.settled) return undefined;
    const chain = session.chain;
    const at = Math.max(Date.now(), session.lastAt);
    warm.delete(runId);
    session.beginStep();
    const fault = await session.feed({ at, events: [event] });
    if (fault) return { chain, at, result: { kind: "failed", error: fault, ...session.takeStepOutput() } };
    return { chain, at, result: finishStep(runId, session) };
  }

  return {
    advance: (input) => exclusively(input.runId, () => advanceNow(input)),
    // Steps of one run take turns: every result of a run on this worker is fed in the order the
    // worker got them, and the workflow puts the steps back in that order (see TakenSteps).
    prestep: (runId, event) => exclusively(runId, () => prestepNow(runId, event)),
    get warmCount() {
      return warm.size;
    },
    dispose() {
      for (const runId of [...warm.keys()]) drop(runId);
    },
  };
}
