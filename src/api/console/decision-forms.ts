/**
 * The decisions a person can take on a run's page, one form each, every one posted to the
 * console's action route for it (console-actions.ts), which calls the API's own route: approve
 * or reject a parked call; answer a server's question; resolve, retry or fail a call whose
 * outcome is unknown; send again a call parked on credentials, or renew the run's own; approve or
 * reject the script; cancel or roll back the run. A form that was just refused shows the refusal
 * beside it, with what was typed in it kept.
 */
import type { RunView } from "../run-service.ts";
import { elicitationFields } from "./elicitation-form.ts";
import { valueHtml } from "./format.ts";
import { html, type Html, type HtmlPart } from "./html.ts";
import { problem, tokenField, type Viewer } from "./layout.ts";
import { runPath } from "./links.ts";

/** The hidden field naming the form a post came from, so a refusal is shown beside it. */
export const FORM_FIELD = "_form";

/** What the last post of a form on this page came to, shown beside that form. */
export interface FormOutcome {
  /** The id of the form that was posted. */
  form: string;
  message: string;
  /** What the form posted (its own fields), to fill it again. */
  values: Record<string, string>;
}

export interface FormContext {
  runId: string;
  viewer: Viewer;
  outcome?: FormOutcome | undefined;
}

type Parked = NonNullable<RunView["parked"]>[number] & { details?: Record<string, unknown> };

function form(ctx: FormContext, id: string, action: string, content: HtmlPart, confirm?: string): Html {
  const refused = ctx.outcome?.form === id ? problem(ctx.outcome.message) : "";
  return html`<form
    method="post"
    action="${runPath(ctx.runId)}/${action}"
    id="${id}"
    ${confirm ? html`data-confirm="${confirm}"` : ""}
  >
    ${tokenField(ctx.viewer)}<input type="hidden" name="${FORM_FIELD}" value="${id}" />${refused}${content}
  </form>`;
}

const valueOf = (ctx: FormContext, id: string, name: string): string =>
  ctx.outcome?.form === id ? (ctx.outcome.values[name] ?? "") : "";

/** An optional reason, recorded in the journal and given to the script (a rejection's, a failure's) or the rollback. */
function reasonField(ctx: FormContext, id: string, label: string): Html {
  return html`<div class="field">
    <label for="${id}-reason">${label} <span class="hint">optional</span></label>
    <input id="${id}-reason" name="reason" maxlength="2000" value="${valueOf(ctx, id, "reason")}" />
  </div>`;
}

function approveOrReject(ctx: FormContext, call: Parked, approveWords: string): Html {
  const seq = call.seq;
  return html`<div class="actions">
    ${form(ctx, `approve-${seq}`, `calls/${seq}/approve`, html`<button type="submit" class="primary">${approveWords} call ${seq}</button>`)}
    ${form(
      ctx,
      `reject-${seq}`,
      `calls/${seq}/reject`,
      html`${reasonField(ctx, `reject-${seq}`, "Why reject")}<button type="submit" class="danger">
          Reject call ${seq}
        </button>`,
    )}
  </div>`;
}

function questionForm(ctx: FormContext, call: Parked): Html {
  const id = `answer-${call.seq}`;
  const message = call.details?.["message"];
  const values = ctx.outcome?.form === id ? ctx.outcome.values : {};
  return html`<p class="question">${typeof message === "string" ? `“${message}”` : "(the server gave no message)"}</p>
    ${form(
      ctx,
      id,
      `calls/${call.seq}/elicitation`,
      html`${elicitationFields(call.details?.["requestedSchema"], id, values)}
        <div class="actions">
          <button type="submit" class="primary" name="action" value="accept">Send the answer</button>
          <button type="submit" name="action" value="decline" formnovalidate>Decline</button>
          <button type="submit" name="action" value="cancel" formnovalidate>Cancel the question</button>
        </div>`,
    )}`;
}

function unknownOutcomeForms(ctx: FormContext, call: Parked): Html {
  const seq = call.seq;
  const resolveId = `resolve-${seq}`;
  return html`<p>Its attempt ended without an answer: it may or may not have taken effect. Find out, then decide.</p>
    ${form(
      ctx,
      resolveId,
      `calls/${seq}/resolve`,
      html`<div class="field">
          <label for="${resolveId}-result"
            >Its result, as JSON
            <span class="hint">the script gets it as if the tool had answered; nothing is sent</span></label
          >
          <textarea id="${resolveId}-result" name="result" rows="3" required data-json>
${valueOf(ctx, resolveId, "result")}</textarea>
        </div>
        <button type="submit" class="primary">Resolve call ${seq}</button>`,
    )}
    <div class="actions">
      ${form(ctx, `retry-${seq}`, `calls/${seq}/retry`, html`<button type="submit">Send call ${seq} again (same key)</button>`)}
      ${form(
        ctx,
        `fail-${seq}`,
        `calls/${seq}/fail`,
        html`${reasonField(ctx, `fail-${seq}`, "Why fail it")}<button type="submit" class="danger">
            Fail call ${seq}
          </button>`,
      )}
    </div>`;
}

/** The run's own credentials for one server: one header (most servers take one), sealed by the API before Temporal sees it. */
export function credentialsForm(ctx: FormContext, server: string, id: string): Html {
  return form(
    ctx,
    id,
    "credentials",
    html`<div class="field">
        <label for="${id}-server">MCP server <span class="hint">its name in the toolset</span></label>
        <input id="${id}-server" name="server" required value="${valueOf(ctx, id, "server") || server}" />
      </div>
      <div class="field">
        <label for="${id}-header">Header</label>
        <input id="${id}-header" name="header" required value="${valueOf(ctx, id, "header") || "Authorization"}" />
      </div>
      <div class="field">
        <label for="${id}-value">Value <span class="hint">e.g. Bearer …; never shown again</span></label>
        <input id="${id}-value" name="value" type="password" autocomplete="off" required />
      </div>
      <button type="submit">Renew the run's credentials</button>`,
  );
}

function credentialsForms(ctx: FormContext, call: Parked): Html {
  const scope = call.details?.["scope"];
  const server = call.tool.slice(0, Math.max(0, call.tool.indexOf(".")));
  return html`<p>
      Its server refused the credentials it was sent with
      (${typeof scope === "string" ? `${scope} scope` : "none were sent"}). Renewing the run's own credentials sends it
      again with the same key; once another scope's are written through the API, send it again here.
    </p>
    ${credentialsForm(ctx, server, `credentials-${call.seq}`)}
    ${form(ctx, `resume-${call.seq}`, `calls/${call.seq}/resume`, html`<button type="submit">Send call ${call.seq} again</button>`)}`;
}

const HEADINGS: Record<string, string> = {
  approval: "waits for approval",
  elicitationRequested: "asks a question",
  credentialsExpired: "waits for credentials",
  insufficientScope: "waits for credentials with more scope",
  schemaChanged: "waits for a decision: its tool's schema changed",
  outcomeUnknown: "waits for a decision: its outcome is unknown",
};

function decisionFor(ctx: FormContext, call: Parked): Html {
  const body = (() => {
    switch (call.reason) {
      case "approval":
        return approveOrReject(ctx, call, "Approve");
      case "schemaChanged":
        return html`<p>The arguments no longer fit the tool as its server lists it now. Approving sends them anyway.</p>
          ${approveOrReject(ctx, call, "Send anyway:")}`;
      case "elicitationRequested":
        return questionForm(ctx, call);
      case "outcomeUnknown":
        return unknownOutcomeForms(ctx, call);
      case "credentialsExpired":
      case "insufficientScope":
        return credentialsForms(ctx, call);
      default:
        return html`<p class="muted">This console does not know how to decide “${call.reason}”.</p>`;
    }
  })();
  return html`<section class="decision" aria-labelledby="decide-${call.seq}">
    <h3 id="decide-${call.seq}">Call ${call.seq} <code>${call.tool}</code> ${HEADINGS[call.reason] ?? call.reason}</h3>
    <p class="muted">Arguments</p>
    ${valueHtml(call.args)} ${body}
  </section>`;
}

function scriptDecision(ctx: FormContext): Html {
  return html`<section class="decision" aria-labelledby="decide-script">
    <h3 id="decide-script">The run waits for its script's approval</h3>
    <p>Nothing of the script has run yet; it is shown below. Rejecting ends the run failed, never run.</p>
    <div class="actions">
      ${form(ctx, "script-approve", "approve", html`<button type="submit" class="primary">Approve the script</button>`)}
      ${form(
        ctx,
        "script-reject",
        "reject",
        html`${reasonField(ctx, "script-reject", "Why reject")}<button type="submit" class="danger">
            Reject the script
          </button>`,
      )}
    </div>
  </section>`;
}

/** What the run waits for a person to decide, a form each. */
export function decisionsHtml(ctx: FormContext, view: RunView): Html {
  const parked = (view.parked ?? []) as Parked[];
  const script = view.scriptApproval?.state === "waiting";
  if (!script && parked.length === 0) return html``;
  return html`${script ? scriptDecision(ctx) : ""}${[...parked].sort((a, b) => a.seq - b.seq).map((call) => decisionFor(ctx, call))}`;
}

/** What a person can do to an open run as a whole: cancel it, roll it back, renew its credentials. */
export function runActionsHtml(ctx: FormContext, servers: readonly string[]): Html {
  return html`<div class="actions">
      ${form(ctx, "cancel", "cancel", html`<button type="submit" class="danger">Cancel the run</button>`, "Cancel this run?")}
      ${form(
        ctx,
        "rollback",
        "rollback",
        html`${reasonField(ctx, "rollback", "Why roll back")}<button type="submit" class="danger">
            Roll the run back
          </button>`,
        "Roll this run back? Its completed calls are reverted by their tools' reverts.",
      )}
    </div>
    <details ${ctx.outcome?.form === "credentials" ? html`open` : ""}>
      <summary>Renew the run's own credentials</summary>
      ${credentialsForm(ctx, servers[0] ?? "", "credentials")}
    </details>`;
}
