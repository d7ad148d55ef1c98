/**
 * A run that waits, before its first step, for the harness to approve its script: asked by the
 * run option `approveScript` or the toolset's `scriptApproval: "required"`. While it waits the
 * run is parked and `run.approval_requested` carries the script as it will run; the decision is
 * an update whose validator refuses it unless the run waits. A rejected script never reaches the
 * sandbox: the run ends (RunEnding) failed with ScriptRejected.
 *
 * Both triggers are fields of the run's input that no run of an earlier release can hold, so no
 * recorded history takes the wait: no patch. The updates are new handlers.
 */
import { condition, setHandler } from "@temporalio/workflow";
import {
  requiresScriptApproval,
  runApprovalRequested,
  type Decider,
  type RunInput,
  type ScriptApprovalView,
} from "../../shared/index.ts";
import { emitEvent } from "./events.ts";
import { approveScriptUpdate, rejectScriptUpdate, type DeciderArgs, type ScriptDecided } from "./messages.ts";
import { assertDecider } from "./run-handlers.ts";
import type { RunStatus } from "./run-status.ts";

export type ScriptDecision = { approved: true } | { approved: false; reason: string; decidedBy?: Decider | undefined };

export class ScriptApproval {
  private current: ScriptApprovalView | undefined;
  private readonly run: RunInput;
  private readonly status: RunStatus;

  constructor(run: RunInput, status: RunStatus) {
    this.run = run;
    this.status = status;
  }

  /** Whether this run asks for its script's approval before its first step. */
  get required(): boolean {
    return requiresScriptApproval(this.run);
  }

  /** Where the run stands on it, once it asked (for the status and journal queries). */
  get view(): ScriptApprovalView | undefined {
    return this.current;
  }

  register(): void {
    const decide = (args: DeciderArgs, state: "approved" | "rejected", reason?: string): ScriptDecided => {
      // Who decided travels in the update's args, so a replay records the same.
      const decidedBy: Decider | undefined = args.decidedBy
        ? { ...args.decidedBy, at: Date.now(), decision: state }
        : undefined;
      this.current = {
        state,
        ...(decidedBy ? { decidedBy } : {}),
        ...(reason === undefined ? {} : { reason }),
      };
      return decidedBy ? { decidedBy } : {};
    };
    const validator = (args: DeciderArgs): void => {
      assertDecider(args);
      if (this.current?.state !== "waiting") throw new Error("the run is not waiting for its script's approval");
    };
    setHandler(approveScriptUpdate, (args) => decide(args, "approved"), { validator });
    setHandler(rejectScriptUpdate, (args) => decide(args, "rejected", args.reason ?? "rejected by the harness"), {
      validator,
    });
  }

  /** Parks the run, tells the harness, and waits for the decision; the run is running again once approved. */
  async wait(): Promise<ScriptDecision> {
    const run = this.run;
    this.current = { state: "waiting" };
    this.status.set("parked");
    await emitEvent(run, "run.approval_requested", runApprovalRequested(run.script, run.scriptHash, run.toolsetId));
    await condition(() => this.current?.state !== "waiting");
    if (this.current?.state === "rejected")
      return { approved: false, reason: this.current.reason ?? "", decidedBy: this.current.decidedBy };
    this.status.set("running");
    return { approved: true };
  }
}
