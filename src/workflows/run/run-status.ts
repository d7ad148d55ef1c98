/**
 * A run's status as the harness sees it: its state (`RewindStatus` search attribute and the
 * status query) — running, parked while any call waits for a decision, and how it ended — and,
 * for the Temporal UI, what it is doing or waiting for in words (current details, RunDetails).
 *
 * An ended run stays ended: since `PATCHES.statusAfterEveryEnd`, a call parked or released after
 * the end was set (one still in flight when the script returned) no longer turns the search
 * attribute back to parked or running.
 *
 * The details are written once per turn of the workflow, however many calls changed: writing
 * them walks every call in flight, and a step that issued 1 000 calls wrote them 1 000 times, a
 * quadratic activation that passed the SDK's 5 s bound on a loaded machine (the workflow task
 * failed, and failed again on every retry).
 */
import { setCurrentDetails, upsertSearchAttributes } from "@temporalio/workflow";
import { SEARCH_ATTRIBUTES, type RunState } from "../../shared/index.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import { describeActivity, type RunActivity } from "./run-details.ts";

const ENDED: ReadonlySet<RunState> = new Set(["completed", "failed", "cancelled", "rolledBack"]);

export class RunStatus {
  private current: RunState = "running";
  private note: string | undefined;
  private activity: (() => Omit<RunActivity, "state" | "note">) | undefined;
  /** Said last, after what the run does (see describeFrom). */
  private footer: string | undefined;
  private shown: string | undefined;
  private touched = false;

  get state(): RunState {
    return this.current;
  }

  get ended(): boolean {
    return ENDED.has(this.current);
  }

  /** Sets the state (a command: the search attribute), then the details; `note` says why a run failed. */
  set(next: RunState, note?: string): void {
    if (this.ended && !ENDED.has(next) && isPatched(PATCHES.statusAfterEveryEnd)) return;
    this.current = next;
    this.note = note;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: next }]);
    this.touch();
  }

  /**
   * Where the details read the run's calls from; they are shown at once. A run continued as new
   * gives its static summary as `summary`: Temporal does not carry static summaries over to the
   * next execution (memo and search attributes it does), so the details say it instead.
   */
  describeFrom(activity: () => Omit<RunActivity, "state" | "note">, summary?: string): void {
    this.activity = activity;
    this.footer = summary === undefined ? undefined : `run (continued as new): ${summary}`;
    this.touch();
  }

  /** Something the details tell changed (a call started, ended, parked…): say it again, once this turn ends. No command. */
  touch(): void {
    if (!this.activity || this.touched) return;
    this.touched = true;
    void Promise.resolve().then(() => {
      this.touched = false;
      this.show();
    });
  }

  private show(): void {
    if (!this.activity) return;
    const activity = describeActivity({ ...this.activity(), state: this.current, note: this.note });
    const text = this.footer ? `${activity}\n${this.footer}` : activity;
    if (text === this.shown) return;
    this.shown = text;
    setCurrentDetails(text);
  }
}
