/**
 * A fork replays its parent's finished calls for as long as the new script issues the same
 * calls (same seq, tool and canonical arguments); the first call that differs ends the reuse for
 * good, and every call from there on is sent for real under the fork's own keys.
 */
import { stableJson } from "../../shared/index.ts";
import type { JournalEntry, ForkSeed } from "../../shared/index.ts";
import type { CallOutcome } from "./call-outcome.ts";

export class ForkReplay {
  private readonly seed: ForkSeed | undefined;

  constructor(seed: ForkSeed | undefined) {
    this.seed = seed;
  }

  get divergedAt(): number | undefined {
    return this.seed?.divergedAt;
  }

  /** The parent's outcome, and the parent, when `entry` repeats the parent's call; else undefined (and reuse ends). */
  reuse(entry: JournalEntry): { outcome: CallOutcome; parentRunId: string } | undefined {
    const seed = this.seed;
    if (!seed || seed.divergedAt !== undefined) return undefined;
    const parent = seed.calls.find((call) => call.seq === entry.seq);
    if (parent && parent.tool === entry.tool && stableJson(parent.args) === stableJson(entry.args)) {
      return { outcome: parent.outcome, parentRunId: seed.parentRunId };
    }
    seed.divergedAt = entry.seq;
    return undefined;
  }

  view(): { parentRunId: string; divergedAt: number | null } | undefined {
    return this.seed ? { parentRunId: this.seed.parentRunId, divergedAt: this.seed.divergedAt ?? null } : undefined;
  }
}
