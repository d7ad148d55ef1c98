/**
 * A toolset's page: its servers and host-tool groups, every tool with its description and
 * policies, the built-ins it enables, a search of its tools (the API's own ranking), and its
 * declarations in both renderings, the `.d.ts` the type-checker reads and the prompt a model
 * reads. Everything a server wrote (names, descriptions, schemas) is shown as text.
 */
import type { PinnedTool, ToolPolicy } from "../../shared/index.ts";
import { listToolGroups } from "../../shared/index.ts";
import { renderDeclarations, searchTools, type ResolvedToolset } from "../../toolsets/index.ts";
import { duration } from "./format.ts";
import { html, type Html } from "./html.ts";
import { page, problem, type Viewer } from "./layout.ts";
import { toolsetLink, toolsetPath } from "./links.ts";

function policyWords(policy: ToolPolicy | undefined): string[] {
  if (!policy) return [];
  const words: string[] = [];
  if (policy.approval) words.push("needs approval");
  if (policy.onInterruption) words.push(policy.onInterruption === "at_most_once" ? "sent at most once" : "retried");
  if (policy.onUnknown === "park") words.push("parks on an unknown outcome");
  if (policy.timeoutMs !== undefined) words.push(`timeout ${duration(policy.timeoutMs)}`);
  if (policy.heartbeatTimeoutMs !== undefined) words.push(`heartbeat ${duration(policy.heartbeatTimeoutMs)}`);
  if (policy.concurrency !== undefined) words.push(`at most ${policy.concurrency} at once`);
  if (policy.revert) words.push(`reverted by ${policy.revert.tool}`);
  return words;
}

function toolRow(group: string, tool: PinnedTool, policy: ToolPolicy | undefined): Html {
  const words = policyWords(policy);
  const description = (tool.description ?? "").split(/\n\s*\n/)[0] ?? "";
  return html`<tr>
    <td class="mono" data-label="Tool">${group}.${tool.name}</td>
    <td data-label="Description">${description || html`<span class="muted">none</span>`}</td>
    <td data-label="Policies">${words.length > 0 ? words.join(", ") : html`<span class="muted">defaults</span>`}</td>
  </tr>`;
}

const tools = (count: number): string => `${count} tool${count === 1 ? "" : "s"}`;

function groupsHtml(toolset: ResolvedToolset): Html {
  const doc = toolset.document;
  return html`<ul>
    ${Object.entries(doc.mcpServers).map(
      ([name, server]) =>
        html`<li>
          <strong>${name}</strong>: MCP server <span class="mono">${server.url}</span>, ${tools(server.tools.length)}
        </li>`,
    )}
    ${Object.entries(doc.hostTools).map(
      ([name, group]) =>
        html`<li>
          <strong>${name}</strong>: host tools on task queue <span class="mono">${group.taskQueue}</span>,
          ${tools(group.tools.length)}
        </li>`,
    )}
    ${doc.http ? html`<li><strong>http</strong>: <code>fetch</code> to ${doc.http.allowedHosts.join(", ")}</li>` : ""}
    ${Object.entries(doc.workflows).map(([name, id]) => html`<li><strong>workflows.${name}</strong>: <span class="mono">${id}</span></li>`)}
  </ul>`;
}

function searchHtml(toolset: ResolvedToolset, query: string | undefined): Html {
  const trimmed = query?.trim() ?? "";
  const found = trimmed ? searchTools(toolset, trimmed.slice(0, 500), 10) : [];
  return html`<form method="get" action="${toolsetPath(toolset.id)}" role="search">
      <label for="tool-query"
        >Find tools <span class="hint">a few words: what the tool should do, or part of its name</span></label
      >
      <input id="tool-query" name="q" type="search" maxlength="500" value="${trimmed}" />
      <button type="submit">Search</button>
    </form>
    ${
      trimmed
        ? found.length === 0
          ? html`<p class="notice">No tool matches.</p>`
          : html`<ol aria-label="Tools found">
              ${found.map((tool) => html`<li><code>${tool.line}</code> <span class="muted">score ${tool.score}</span></li>`)}
            </ol>`
        : ""
    }`;
}

export function toolsetPageHtml(toolset: ResolvedToolset, viewer: Viewer, query: string | undefined): Html {
  const doc = toolset.document;
  const rows = listToolGroups(doc).flatMap(({ group, tools }) =>
    tools.map((tool) => toolRow(group, tool, doc.policies[`${group}.${tool.name}`])),
  );
  let declarations: Html;
  try {
    declarations = html`<details>
        <summary>The <code>.d.ts</code> scripts are type-checked against</summary>
        <pre class="value">${renderDeclarations(toolset, { format: "dts" })}</pre>
      </details>
      <details>
        <summary>The prompt a model is shown</summary>
        <pre class="value">${renderDeclarations(toolset, { format: "prompt" })}</pre>
      </details>`;
  } catch (error) {
    declarations = problem(error instanceof Error ? error.message : String(error));
  }
  return page({
    title: `Toolset ${toolset.id.slice(0, 15)}`,
    viewer,
    main: html`<h1>Toolset <span class="mono">${toolset.id}</span></h1>
      <p>
        <a href="/ui/runs?toolset=${toolset.id}">Its runs</a>
        ${doc.base ? html` · derived from ${toolsetLink(doc.base)}` : ""}
        ${doc.scriptApproval === "required" ? " · every run waits for its script's approval" : ""}
      </p>
      <h2>Servers and groups</h2>
      ${groupsHtml(toolset)}
      <h2>Tools</h2>
      ${searchHtml(toolset, query)}
      ${
        rows.length === 0
          ? html`<p class="muted">No tools but the built-ins.</p>`
          : html`<table class="cards">
              <caption class="sr-only">
                Tools and their policies
              </caption>
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col">Description</th>
                  <th scope="col">Policies</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }
      <h2>Declarations</h2>
      ${declarations}`,
  });
}
