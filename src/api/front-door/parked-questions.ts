/**
 * What the front door may ask the client's user about a parked run, and what the answer does:
 * - a call parked for approval, a run waiting for its script's approval, and a call whose tool's
 *   schema changed become yes/no questions (accept approves or sends anyway, decline rejects,
 *   cancel leaves it waiting);
 * - a call whose outcome is unknown asks what to do: send it again (same idempotency key) or fail
 *   it; decline and cancel leave it waiting (resolving it with a result is the API's and the
 *   console's);
 * - a call whose MCP server asked for input forwards the server's own question and schema, and
 *   the answer goes back to the server as it is.
 * The answer decides the call through the run service, exactly as the API's routes do: the same
 * update, the same journal entry, `decidedBy` naming the API key's principal and, when the session
 * names one, the end user. A call parked on credentials is never asked: MCP forbids asking a user
 * for secrets in a form, so the harness or the console renews them.
 */
import { HttpError } from "../http-error.ts";
import type { RunService, RunView } from "../run-service.ts";
import type { Answer, FrontDoorScope, Question } from "./front-door-types.ts";

/** One thing to ask: `key` tells it apart from what was asked before, across reads of the run. */
export interface ParkedQuestion {
  key: string;
  /** The question, made when it is asked (a script's approval reads the script then). */
  question(): Promise<Question>;
  /** Applies the user's answer; a decision the run no longer takes (409, 422) is left as it is. */
  decide(answer: Answer): Promise<void>;
}

type Decisions = Pick<RunService, "decide" | "answerInput" | "decideScript" | "scriptSource">;

/** At most this much of a script goes into the question about its approval. */
const SCRIPT_CHARS = 4_000;

const NO_FIELDS = { type: "object", properties: {} } as const;

/** What a user may do about a call whose outcome is unknown, by the value the form sends. */
const UNKNOWN_OUTCOME_CHOICES = {
  retry: "Send it again (the server sees the same key)",
  fail: "Fail the call",
} as const;

function argsPreview(args: unknown): string {
  const json = JSON.stringify(args) ?? "";
  return json.length <= 800 ? json : `${json.slice(0, 800)}…`;
}

/** A form schema as MCP elicitation takes it: an object of properties; anything else is not asked. */
function formSchema(value: unknown): Question["requestedSchema"] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { type, properties, required } = value as Record<string, unknown>;
  if (type !== "object" || typeof properties !== "object" || properties === null) return undefined;
  const names = Array.isArray(required) && required.every((r) => typeof r === "string") ? required : undefined;
  return {
    type: "object",
    properties: properties as Record<string, unknown>,
    ...(names ? { required: names as string[] } : {}),
  };
}

async function settle(decision: Promise<unknown>): Promise<void> {
  try {
    await decision;
  } catch (error) {
    // Decided meanwhile (another client, the API), the run ended, or the content did not fit.
    if (error instanceof HttpError && (error.status === 409 || error.status === 422)) return;
    throw error;
  }
}

/** A run waiting for its script's approval: the script (as it runs: types blanked), to approve or reject. */
function scriptQuestion(view: RunView, scope: FrontDoorScope, runs: Decisions, decider: Decider): ParkedQuestion {
  return {
    key: "script",
    async question() {
      const { input } = await runs.scriptSource(view.id, scope.namespace);
      const script = input.script.replace(/[ \t]+$/gm, "");
      const shown = script.length <= SCRIPT_CHARS ? script : `${script.slice(0, SCRIPT_CHARS)}…`;
      return {
        message: `Run ${view.id} waits for its script to be approved before it starts. Accept runs it, decline rejects it.\n\n${shown}`,
        requestedSchema: NO_FIELDS,
      };
    },
    async decide(answer) {
      if (answer.action === "cancel") return;
      const decision =
        answer.action === "accept"
          ? { approve: true, ...decider }
          : { approve: false, reason: "declined by the user of the MCP client", ...decider };
      await settle(runs.decideScript(view.id, scope.namespace, decision));
    },
  };
}

/** The questions the run raises: its script's approval, then its parked calls in the order of their calls. */
export function questionsFor(view: RunView, scope: FrontDoorScope, runs: Decisions): ParkedQuestion[] {
  const decider = { principal: scope.principal, ...(scope.endUser ? { by: scope.endUser } : {}) };
  const script = view.scriptApproval?.state === "waiting" ? [scriptQuestion(view, scope, runs, decider)] : [];
  return [...script, ...callQuestions(view, scope, runs, decider)];
}

type Decider = { principal: string; by?: string };

function callQuestions(view: RunView, scope: FrontDoorScope, runs: Decisions, decider: Decider): ParkedQuestion[] {
  /** Accept decides `yes`, decline rejects; cancel leaves the call waiting. */
  const yesOrNo =
    (seq: number): ParkedQuestion["decide"] =>
    async (answer) => {
      if (answer.action === "cancel") return;
      const decision =
        answer.action === "accept"
          ? { approve: true as const, ...decider }
          : { approve: false as const, reason: "declined by the user of the MCP client", ...decider };
      await settle(runs.decide(view.id, scope.namespace, seq, decision));
    };
  return (view.parked ?? []).flatMap((call): ParkedQuestion[] => {
    switch (call.reason) {
      case "approval":
        return [
          {
            key: `${call.seq}/approval`,
            // Made when asked: a run is read again and again while it waits, its arguments may be large.
            question: async () => ({
              message: `Run ${view.id} wants to call ${call.tool} with ${argsPreview(call.args)}. Approve this call? Accept approves it, decline rejects it.`,
              requestedSchema: NO_FIELDS,
            }),
            decide: yesOrNo(call.seq),
          },
        ];
      case "schemaChanged":
        return [
          {
            key: `${call.seq}/schemaChanged`,
            question: async () => ({
              message:
                call.details?.["current"] === null
                  ? `Run ${view.id} wants to call ${call.tool} with ${argsPreview(call.args)}, but its server no longer lists that tool. Send the call anyway? Accept sends it, decline rejects it (the script gets ToolError schemaChanged).`
                  : `Run ${view.id} wants to call ${call.tool} with ${argsPreview(call.args)}, but the tool's schema changed since the toolset was registered and the arguments no longer fit it. Send them anyway? Accept sends them, decline rejects the call (the script gets ToolError schemaChanged).`,
              requestedSchema: NO_FIELDS,
            }),
            decide: yesOrNo(call.seq),
          },
        ];
      case "outcomeUnknown":
        return [
          {
            key: `${call.seq}/outcomeUnknown`,
            question: async () => ({
              message: `Run ${view.id} called ${call.tool} with ${argsPreview(call.args)}, and the attempt ended without an answer: it may or may not have taken effect. Find out if you can, then choose. Decline leaves the call waiting for the harness.`,
              requestedSchema: {
                type: "object",
                properties: {
                  decision: {
                    type: "string",
                    title: "What to do with the call",
                    enum: Object.keys(UNKNOWN_OUTCOME_CHOICES),
                    enumNames: Object.values(UNKNOWN_OUTCOME_CHOICES),
                  },
                },
                required: ["decision"],
              },
            }),
            async decide(answer) {
              if (answer.action !== "accept") return;
              const choice = answer.content["decision"];
              if (choice === "retry")
                await settle(runs.decide(view.id, scope.namespace, call.seq, { retry: true, ...decider }));
              else if (choice === "fail")
                await settle(
                  runs.decide(view.id, scope.namespace, call.seq, {
                    fail: true,
                    reason: "failed by the user of the MCP client: its outcome was unknown",
                    ...decider,
                  }),
                );
            },
          },
        ];
      case "elicitationRequested": {
        const schema = formSchema(call.details?.["requestedSchema"]);
        const message = call.details?.["message"];
        if (!schema || typeof message !== "string") return [];
        return [
          {
            key: `${call.seq}/input/${String(call.details?.["requestId"])}`,
            question: async () => ({ message, requestedSchema: schema }),
            decide: (answer) => settle(runs.answerInput(view.id, scope.namespace, call.seq, answer)),
          },
        ];
      }
      default:
        return [];
    }
  });
}
