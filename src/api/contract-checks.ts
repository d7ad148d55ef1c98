/**
 * Drift checks between the contract and the code behind it: what the routes and the pinning
 * build must fit what the contract (src/contract/) says the API answers, and the contract's
 * closed lists must name only what the code can produce. Types only: a drift fails `tsc`.
 */
import type {
  ApiErrorBody,
  CallDecisionBody,
  JournalEntryBody,
  OmitReason,
  OmittedTool,
  RegisteredToolsetView,
  RunListBody,
  RunViewBody,
  ScriptDecisionBody,
  ToolsetView,
} from "../contract/index.ts";
import type { SchemaProblemReason } from "../schemas/index.ts";
import type { JournalEntry, PinnedToolset } from "../shared/index.ts";
import type { CallDecided, ScriptDecided } from "../workflows/messages.ts";
import type { ApiErrorCode } from "./http-error.ts";
import type { RunListItem } from "./run-list.ts";
import type { RunView } from "./run-service.ts";

type Fits<Actual extends Documented, Documented> = [Actual, Documented];
export type _Checks = [
  Fits<RunView, RunViewBody>,
  Fits<RunListItem, RunListBody["runs"][number]>,
  Fits<CallDecided, CallDecisionBody>,
  Fits<ScriptDecided, ScriptDecisionBody>,
  Fits<JournalEntry, JournalEntryBody>,
  Fits<PinnedToolset, ToolsetView["document"]>,
  Fits<OmittedTool, RegisteredToolsetView["omittedTools"][number]>,
  Fits<ApiErrorCode, ApiErrorBody["error"]["code"]>,
  Fits<ApiErrorBody["error"]["code"], ApiErrorCode>,
  Fits<OmitReason, SchemaProblemReason | "notASchema">,
];
