/**
 * Replays a script against a cassette, offline: no network, no tools, no Temporal. Each call
 * the script makes is checked against the recording (same seq, tool and canonical arguments)
 * and answered with the recorded outcome, in the order and groups the run received them. The
 * first difference stops the replay with the seq, the call the recording expected and the one
 * the script made. This is how a harness tests a script or prompt change deterministically.
 *
 * The engine (isolated-vm, TypeScript's checker, ajv) is loaded on the first replay, not when the
 * SDK is imported: a harness that only serves host tools or calls the API never loads it, and runs
 * on Node versions isolated-vm has no build for. Replaying needs the `isolated-vm` package (Node 24
 * or newer) and Node started with `--no-node-snapshot`.
 *
 * @example
 * const outcome = await replayCassette({ cassette, script: await readFile("script.ts", "utf8") });
 * if (!outcome.ok) console.error(outcome.error.message);
 */
import type { Diagnostic } from "../declarations/index.ts";
import type { Sandbox } from "../sandbox/index.ts";
import { stableJson } from "../shared/index.ts";
import type { CallEvent, IssuedCall, JournalEntry, Cassette, AdvanceResult, ScriptError } from "../shared/index.ts";

export interface ReplayOptions {
  cassette: Cassette;
  /** TypeScript to replay instead of the recorded script (checked against the cassette's toolset). */
  script?: string;
  memoryMb?: number;
  cpuMsPerStep?: number;
}

export type ReplayError =
  | { kind: "typeCheck"; message: string; diagnostics: Diagnostic[] }
  | {
      kind: "divergence";
      message: string;
      seq: number;
      expected: { tool: string; args: unknown } | null;
      actual: { tool: string; args: unknown } | null;
    }
  | { kind: "script"; message: string; error: ScriptError };

export type ReplayOutcome = { ok: true; result: unknown; calls: number } | { ok: false; error: ReplayError };

function diverged(seq: number, expected: JournalEntry | undefined, actual: IssuedCall | undefined): ReplayOutcome {
  const show = (call: { tool: string; args: unknown } | undefined) =>
    call ? `${call.tool}(${stableJson(call.args)})` : "nothing";
  return {
    ok: false,
    error: {
      kind: "divergence",
      seq,
      message: `call ${seq} differs from the recording: expected ${show(expected)}, the script made ${show(actual)}`,
      expected: expected ? { tool: expected.tool, args: expected.args } : null,
      actual: actual ? { tool: actual.tool, args: actual.args } : null,
    },
  };
}

function eventOf(entry: JournalEntry): CallEvent {
  return entry.status === "completed"
    ? { seq: entry.seq, ok: true, value: entry.result ?? null }
    : {
        seq: entry.seq,
        ok: false,
        error: entry.error ?? { code: "toolFailed", message: "no outcome recorded", tool: entry.tool, seq: entry.seq },
      };
}

/** Loads what a replay runs on; a failure says what replaying needs. */
async function loadEngine() {
  try {
    const [declarations, sandbox, schemas] = await Promise.all([
      import("../declarations/index.ts"),
      import("../sandbox/index.ts"),
      import("../schemas/index.ts"),
    ]);
    return { ...declarations, ...sandbox, ...schemas };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `replaying needs the isolated-vm package (npm install isolated-vm; Node 24 or newer, started with --no-node-snapshot): ${reason}`,
      { cause: error },
    );
  }
}

export async function replayCassette(options: ReplayOptions): Promise<ReplayOutcome> {
  const { cassette } = options;
  const { compileScript, createSandbox, createTypeChecker, renderDts, validateAgainstSchema, MachineBusyError } =
    await loadEngine();
  let script = cassette.script;
  if (options.script !== undefined) {
    const compiled = await compileScript(createTypeChecker(), options.script, {
      declarations: renderDts(cassette.toolset),
      declarationsKey: cassette.toolsetId,
    });
    if (!compiled.ok)
      return {
        ok: false,
        error: {
          kind: "typeCheck",
          message: "the script does not type-check against the cassette's toolset",
          diagnostics: compiled.diagnostics,
        },
      };
    script = compiled.javascript;
  }
  // A machine too busy to give a step its CPU time is not the script's verdict: the replay, which
  // is deterministic, is made again from the start, as a run's step would be.
  for (let attempt = 1; ; attempt++) {
    const sandbox = createSandbox({
      memoryMb: options.memoryMb ?? 128,
      cpuMsPerStep: options.cpuMsPerStep ?? 2000,
      warmSessions: 1,
      validate: validateAgainstSchema,
    });
    try {
      return await replayIn(sandbox, cassette, script);
    } catch (error) {
      if (!(error instanceof MachineBusyError) || attempt >= BUSY_ATTEMPTS) throw error;
    } finally {
      sandbox.dispose();
    }
  }
}

/** Attempts of a replay the machine was too busy for, before its MachineBusyError is the answer. */
const BUSY_ATTEMPTS = 3;

/** The replay itself, step by step, in `sandbox`. */
async function replayIn(sandbox: Sandbox, cassette: Cassette, script: string): Promise<ReplayOutcome> {
  const issued = new Set<number>();
  const check = (result: AdvanceResult): ReplayOutcome | undefined => {
    if (result.kind === "needsColdStart") throw new Error("the sandbox lost the replay's session");
    for (const call of result.calls) {
      const expected = cassette.entries[call.seq - 1];
      if (!expected || expected.tool !== call.tool || stableJson(expected.args) !== stableJson(call.args))
        return diverged(call.seq, expected, call);
      issued.add(call.seq);
    }
    if (result.kind === "done") return { ok: true, result: result.result, calls: issued.size };
    if (result.kind === "failed")
      return { ok: false, error: { kind: "script", message: result.error.message, error: result.error } };
    return undefined;
  };
  const runId = cassette.runId;
  let outcome = check(
    await sandbox.advance({
      runId,
      consumedBatches: 0,
      batches: [],
      cold: {
        script,
        input: cassette.input,
        toolset: cassette.toolset,
        startedAt: cassette.startedAt,
        history: [],
        knownCalls: 0,
        ...(cassette.runtimeVersion === undefined ? {} : { runtimeVersion: cassette.runtimeVersion }),
      },
    }),
  );
  for (const [index, batch] of cassette.batches.entries()) {
    if (outcome) return outcome;
    const missing = batch.seqs.find((seq) => !issued.has(seq));
    if (missing !== undefined) return diverged(missing, cassette.entries[missing - 1], undefined);
    const events = batch.seqs.map((seq) => eventOf(cassette.entries[seq - 1] as JournalEntry));
    outcome = check(await sandbox.advance({ runId, consumedBatches: index, batches: [{ at: batch.at, events }] }));
  }
  if (outcome) return outcome;
  const next = issued.size + 1;
  return diverged(next, cassette.entries[next - 1], undefined);
}
