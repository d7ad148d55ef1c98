/**
 * The console (`/ui`) in a real browser (Debian's Chromium, driven by playwright-core) against a
 * real stack with API keys for two namespaces and a real MCP server: a person signs in with a
 * key (which goes into no URL and no cookie a script can read), approves a parked call and sees
 * the run complete, answers a server's question through the form built from its schema (a wrong
 * answer first: the API's refusal shows and nothing typed is lost), cancels a run and sees it
 * cancelled, cannot reach another namespace's run by its URL, and sees a result made of markup
 * as text. Forms posted without the session's token, or from another origin, decide nothing.
 * Each page's screenshot is written to .rewind/screenshots/.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFingerprint } from "../../src/api/auth.ts";
import { CONTENT_SECURITY_POLICY } from "../../src/api/console/index.ts";
import { launchBrowser, screenshot, type Browser, type BrowserContext, type Page } from "../helpers/browser.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { chargeOnRetryTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const KEY_A = `console-a-${randomUUID()}`;
const KEY_B = `console-b-${randomUUID()}`;
const suffix = randomUUID().slice(0, 8);
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };

const PERSON = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name" },
    email: { type: "string", format: "email", title: "Email" },
    age: { type: "integer", minimum: 0, title: "Age" },
  },
  required: ["name", "email", "age"],
};

let stack: RewindStack;
let server: TestMcpServer;
let payServer: TestMcpServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let toolset: string;
const requestedUrls: string[] = [];

beforeAll(async () => {
  [stack, server, payServer, browser] = await Promise.all([
    startRewindStack({ env: { REWIND_API_KEYS: `${KEY_A}:acme-${suffix},${KEY_B}:globex-${suffix}` } }),
    startMcpServer({
      tools: [
        {
          name: "create_ticket",
          description: "Open a ticket.",
          inputSchema: {
            type: "object",
            properties: { title: { type: "string" }, priority: { enum: ["low", "high"] } },
            required: ["title", "priority"],
          },
          handler: async () => ({ content: [{ type: "text", text: '{"number":1}' }] }),
        },
        {
          name: "ask_person",
          description: "Ask who is there.",
          inputSchema: { type: "object" },
          handler: async (_args, extra) => ({
            content: [
              {
                type: "text",
                text: JSON.stringify(
                  await extra.ask("elicitation/create", { message: "Who are you?", requestedSchema: PERSON }),
                ),
              },
            ],
          }),
        },
      ],
    }),
    startMcpServer({ tools: [chargeOnRetryTool()] }),
    launchBrowser(),
  ]);
  const registered = await stack.request(
    "POST",
    "/v1/toolsets",
    {
      mcpServers: { tickets: { url: server.url }, pay: { url: payServer.url } },
      policies: {
        "tickets.create_ticket": { approval: true },
        "pay.charge": { onInterruption: "at_most_once", onUnknown: "park" },
      },
    },
    asA,
  );
  toolset = String(registered.body.id);
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  context.on("request", (request) => requestedUrls.push(request.url()));
  context.on("dialog", (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
  await server?.close();
  await payServer?.close();
});

const ui = (path: string): string => `${stack.api.url}/ui${path}`;

async function startRun(script: string, headers = asA, withToolset = true, more: object = {}): Promise<string> {
  const { status, body } = await stack.request(
    "POST",
    "/v1/runs",
    { script, ...(withToolset ? { toolset } : {}), ...more },
    headers,
  );
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

function runParked(id: string, headers = asA): Promise<ApiBody> {
  return waitFor(
    `run ${id} to park`,
    async () => (await stack.request("GET", `/v1/runs/${id}`, undefined, headers)).body,
    {
      until: (view) => view.status === "parked",
      timeoutMs: 20_000,
    },
  );
}

/** Waits until the page's element matching `selector` holds `text` (the page may reload under the probe). */
function see(what: string, selector: string, text: string | RegExp, on: Page = page): Promise<string> {
  return waitFor(what, async () => (await on.locator(selector).first().textContent({ timeout: 1_000 })) ?? "", {
    until: (seen) => (typeof text === "string" ? seen.includes(text) : text.test(seen)),
    retryErrors: true,
    timeoutMs: 20_000,
    shown: (seen) => seen.slice(0, 500),
  });
}

const squash = (text: string): string => text.replace(/\s+/g, " ");

describe("the console in a browser", () => {
  it("signs in with a key, which goes into no URL and no cookie a script can read", async () => {
    await page.goto(ui("/runs"));
    expect(new URL(page.url()).pathname).toBe("/ui/sign-in");
    await screenshot(page, "console-sign-in");
    await page.fill("#key", "not-a-key-of-this-rewind");
    const refused = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/ui/session")),
      page.click("button[type=submit]"),
    ]);
    expect(refused[0].status()).toBe(401);
    await see("the refusal of a wrong key", "main", "not an API key");
    await page.fill("#key", KEY_A);
    await page.click("button[type=submit]");
    await see("the runs page after signing in", "h1", "Runs");
    expect(await see("the signed-in principal", ".who", keyFingerprint(KEY_A))).toContain(`acme-${suffix}`);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: "rewind_console", httpOnly: true, sameSite: "Strict", path: "/ui" });
    expect(cookies[0]?.value).not.toContain(KEY_A);
    // Browser-side code is given as text: this project's types know Node, not the DOM.
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(requestedUrls.filter((url) => url.includes(KEY_A))).toEqual([]);
  });

  it("approves a parked call from the run's page, and the page follows the run to its end", async () => {
    const id = await startRun(
      `import { tickets } from "rewind:tools";\n// Files the slow-checkout ticket\nexport default async function main() {\n  const ticket = await tickets.create_ticket({ title: "Checkout is slow", priority: "high" });\n  return { opened: ticket };\n}\n`,
    );
    await runParked(id);
    const response = await page.goto(ui(`/runs/${id}`));
    expect(response?.headers()["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
    expect(squash(await see("what the run waits for", "#run-live", "approval of call 1"))).toContain(
      "approval of call 1 tickets.create_ticket",
    );
    expect(await page.locator("ol.script li.call").count()).toBe(1);
    await screenshot(page, "console-run-parked");
    // The README's picture: the top of the page, at a modest size.
    await page.setViewportSize({ width: 1000, height: 960 });
    await screenshot(page, "console-run", { fullPage: false });
    await page.setViewportSize({ width: 1200, height: 900 });
    // By keyboard: the decision is a button like any other.
    await page.getByRole("button", { name: "Approve call 1" }).focus();
    await page.keyboard.press("Enter");
    await see("the run to show completed", "[data-state]", "completed");
    await see("the result on the page", "#run-live", '"number": 1');
    await screenshot(page, "console-run-completed");
    const journal = await stack.request("GET", `/v1/runs/${id}/journal`, undefined, asA);
    const entry = (journal.body["entries"] as { decidedBy?: { principal: string; decision: string } }[])[0];
    expect(entry?.decidedBy).toMatchObject({
      principal: `acme-${suffix}/${keyFingerprint(KEY_A)}`,
      decision: "approved",
    });
  });

  it("answers a server's question through its form; a wrong answer is refused first and nothing typed is lost", async () => {
    const id = await startRun(
      `import { tickets } from "rewind:tools";\nexport default async function main() { return await tickets.ask_person({}); }\n`,
    );
    await runParked(id);
    await page.goto(ui(`/runs/${id}`));
    await see("the question", ".decision", "Who are you?");
    await page.getByLabel("Name (required)").fill("Ada");
    await page.getByLabel("Email (required)").fill("ada@example");
    await page.getByLabel("Age (required)").fill("-1");
    expect(await page.evaluate("document.getElementById('answer-1').checkValidity()")).toBe(false);
    await page.getByLabel("Age (required)").fill("36");
    // The browser takes "ada@example" for an email; the schema's format does not, and the API says so.
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/runs/${id}/calls/1/elicitation`)),
      page.getByRole("button", { name: "Send the answer" }).click(),
    ]);
    expect(refused.status()).toBe(422);
    expect(await see("the API's refusal beside the form", "#answer-1 .problem", "email")).toContain(
      "does not fit the schema",
    );
    expect(await page.getByLabel("Name (required)").inputValue()).toBe("Ada");
    expect(await page.getByLabel("Email (required)").inputValue()).toBe("ada@example");
    expect(await page.getByLabel("Age (required)").inputValue()).toBe("36");
    await screenshot(page, "console-question-refused");
    expect((await stack.request("GET", `/v1/runs/${id}`, undefined, asA)).body.status).toBe("parked");
    await page.getByLabel("Email (required)").fill("ada@example.com");
    await page.getByRole("button", { name: "Send the answer" }).click();
    await see("the run to show completed", "[data-state]", "completed");
    const done = await waitForRun(stack, id, 20_000, asA);
    expect(JSON.stringify(done.result)).toContain("ada@example.com");
  });

  it("resolves a call whose outcome is unknown; a result that does not fit the tool's schema is refused first", async () => {
    const id = await startRun(
      `import { pay } from "rewind:tools";\nexport default async function main() { return await pay.charge({ amount: 5 }); }\n`,
    );
    await runParked(id);
    await page.goto(ui(`/runs/${id}`));
    expect(squash(await see("what the run waits for", "#run-live", "outcome is unknown"))).toContain(
      "a decision on call 1 pay.charge: its outcome is unknown",
    );
    const result = page.getByLabel(/Its result, as JSON/);
    await result.fill("{charged");
    expect(await page.evaluate("document.getElementById('resolve-1').checkValidity()")).toBe(false);
    await result.fill('{"charged": "yes"}');
    await page.getByRole("button", { name: "Resolve call 1" }).click();
    expect(await see("the API's refusal of the result", "#resolve-1 .problem", "output schema")).toContain("charged");
    expect(await result.inputValue()).toBe('{"charged": "yes"}');
    await result.fill('{"charged": true}');
    await page.getByRole("button", { name: "Resolve call 1" }).click();
    await see("the run to show completed", "[data-state]", "completed");
    expect((await waitForRun(stack, id, 20_000, asA)).result).toEqual({ charged: true });
  });

  it("sends a call whose outcome is unknown again, or fails it with a reason the script gets", async () => {
    const script = `import { pay, ToolError } from "rewind:tools";
export default async function main() {
  try { return await pay.charge({ amount: 7 }); }
  catch (e) { return e instanceof ToolError ? [e.code, e.message] : String(e); }
}
`;
    const retried = await startRun(script);
    await runParked(retried);
    await page.goto(ui(`/runs/${retried}`));
    await see("the decision", ".decision", "outcome is unknown");
    await page.getByRole("button", { name: "Send call 1 again (same key)" }).click();
    await see("the run to show completed", "[data-state]", "completed");
    expect((await waitForRun(stack, retried, 20_000, asA)).result).toEqual({ charged: true, attempt: 2 });

    const failed = await startRun(script);
    await runParked(failed);
    await page.goto(ui(`/runs/${failed}`));
    await see("the decision", ".decision", "outcome is unknown");
    await page.getByLabel("Why fail it").fill("the ledger shows no charge");
    await page.getByRole("button", { name: "Fail call 1" }).click();
    await see("the run to show completed", "[data-state]", "completed");
    const done = await waitForRun(stack, failed, 20_000, asA);
    expect(done.result).toEqual(["outcomeUnknown", expect.stringContaining("the ledger shows no charge")]);
  });

  it("approves a run's script before anything of it runs", async () => {
    const id = await startRun(`export default async function main() { return "ran"; }\n`, asA, false, {
      approveScript: true,
    });
    await runParked(id);
    await page.goto(ui(`/runs/${id}`));
    await see("what the run waits for", "#run-live", "approval of its script");
    await page.getByRole("button", { name: "Approve the script" }).click();
    await see("the run to show completed", "[data-state]", "completed");
    expect((await waitForRun(stack, id, 20_000, asA)).result).toBe("ran");
  });

  it("cancels a sleeping run, which the list showed sleeping and then shows cancelled", async () => {
    const id = await startRun(
      `import { sleep } from "rewind:tools";\nexport default async function main() { await sleep("1 hour"); return 1; }\n`,
    );
    await page.goto(ui("/runs"));
    await see("the sleeping run in the list", "tbody", id);
    expect(squash((await page.locator("tr", { hasText: id }).textContent()) ?? "")).toMatch(
      /sleeping .*sleeping until/,
    );
    await screenshot(page, "console-runs");
    // The list stays open beside the run's page, and follows the run.
    const list = page;
    page = await context.newPage();
    await page.goto(ui(`/runs/${id}`));
    // Its own credentials, through the API's route: a server the toolset lacks is refused there.
    await page.locator("summary", { hasText: "Renew the run's own credentials" }).click();
    await page.fill("#credentials-server", "nope");
    await page.fill("#credentials-value", "Bearer one");
    await page.getByRole("button", { name: "Renew the run's credentials" }).click();
    expect(await see("the API's refusal of the server", "#credentials .problem", "not an MCP server")).toContain(
      '"nope"',
    );
    expect(await page.inputValue("#credentials-value")).toBe("");
    await page.fill("#credentials-server", "tickets");
    await page.fill("#credentials-value", "Bearer two");
    await page.getByRole("button", { name: "Renew the run's credentials" }).click();
    await see("the run's page again, without a refusal", "[data-state]", "sleeping");
    expect(await page.locator(".problem").count()).toBe(0);
    await page.getByRole("button", { name: "Cancel the run" }).click();
    await see("the run to show cancelled", "[data-state]", "cancelled");
    await see("the list left open to show it cancelled", `tr:has-text("${id}")`, "cancelled", list);
    await page.close();
    page = list;
    await page.goto(ui("/runs?status=cancelled"));
    expect(await page.locator("tr", { hasText: id }).textContent()).toContain("cancelled");
  });

  it("does not reach another namespace's run by its URL, nor decide anything of it", async () => {
    const theirs = await startRun(
      `import { sleep } from "rewind:tools";\nexport default async function main() { await sleep("1 hour"); }\n`,
      asB,
      false,
    );
    const response = await page.goto(ui(`/runs/${theirs}`));
    expect(response?.status()).toBe(404);
    expect(await page.locator("main").textContent()).toContain(`run ${theirs} was not found`);
    await page.goto(ui("/runs"));
    expect(await page.locator("main").textContent()).not.toContain(theirs);
    // A form of the console's own page, pointed at their run: the session's token, the same origin.
    const status = await page.evaluate(`(async () => {
      const body = new URLSearchParams({ _csrf: document.querySelector("input[name=_csrf]").value });
      return (await fetch("/ui/runs/${theirs}/cancel", { method: "POST", body })).status;
    })()`);
    expect(status).toBe(404);
    expect((await stack.request("GET", `/v1/runs/${theirs}`, undefined, asB)).body.status).toBe("running");
    await stack.request("POST", `/v1/runs/${theirs}/cancel`, {}, asB);
  });

  it("shows a result made of markup as text, under a policy that runs nothing inline", async () => {
    const markup = `<img src=x onerror="document.title='pwned'">`;
    const id = await startRun(
      `// <script>document.title = 'pwned'</script>\nexport default async function main() { return ${JSON.stringify(markup)}; }\n`,
      asA,
      false,
    );
    await waitForRun(stack, id, 20_000, asA);
    await page.goto(ui(`/runs/${id}`));
    // The result is shown as JSON: the string, quotes escaped, its markup as text.
    expect(await see("the result as text", "#run-live", "<img src=x onerror=")).toContain("<script>document.title");
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.locator("main script").count()).toBe(0);
    expect(await page.title()).not.toContain("pwned");
  });

  it("refuses a form posted without the session's token or from another origin, deciding nothing", async () => {
    const id = await startRun(
      `import { tickets } from "rewind:tools";\nexport default async function main() { return await tickets.create_ticket({ title: "x", priority: "low" }); }\n`,
    );
    await runParked(id);
    await page.goto(ui(`/runs/${id}`));
    const token = await page.locator("input[name=_csrf]").first().inputValue();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    const post = (fields: Record<string, string>, origin: string) =>
      fetch(ui(`/runs/${id}/calls/1/approve`), {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields),
      });
    expect((await post({}, stack.api.url)).status).toBe(403);
    expect((await post({ _csrf: "guessed" }, stack.api.url)).status).toBe(403);
    expect((await post({ _csrf: token }, "http://attacker.example")).status).toBe(403);
    expect((await stack.request("GET", `/v1/runs/${id}`, undefined, asA)).body.status).toBe("parked");
    expect((await post({ _csrf: token }, stack.api.url)).status).toBe(303);
    expect((await waitForRun(stack, id, 20_000, asA)).status).toBe("completed");
  });

  it("shows a toolset: its servers, tools, policies, a search and both declarations", async () => {
    await page.goto(ui(`/toolsets/${toolset}`));
    expect(squash((await page.locator("tr", { hasText: "tickets.create_ticket" }).textContent()) ?? "")).toContain(
      "needs approval",
    );
    await page.getByLabel(/Find tools/).fill("open a ticket");
    await page.getByRole("button", { name: "Search" }).click();
    await see("the tools found", "ol[aria-label='Tools found']", "tickets.create_ticket");
    await page.locator("details", { hasText: "The .d.ts" }).locator("summary").click();
    expect(await page.locator("details", { hasText: "The .d.ts" }).textContent()).toContain("create_ticket");
    await screenshot(page, "console-toolset");
  });

  it("signs out: the session is gone, and its cookie opens nothing", async () => {
    await page.goto(ui("/runs"));
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    await page.getByRole("button", { name: "Sign out" }).click();
    await see("the sign-in page", "h1", "Sign in");
    expect(await context.cookies()).toEqual([]);
    const reused = await fetch(ui("/runs"), { headers: { cookie }, redirect: "manual" });
    expect(reused.status).toBe(303);
    expect(reused.headers.get("location")).toBe("/ui/sign-in");
  });

  it("fits a phone's width", async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(ui("/sign-in"));
    await phone.fill("#key", KEY_A);
    await phone.click("button[type=submit]");
    await see("the runs page after signing in again", "h1", "Runs", phone);
    const id = await startRun(
      `import { tickets } from "rewind:tools";\nexport default async function main() { return await tickets.create_ticket({ title: "From a phone", priority: "low" }); }\n`,
    );
    await runParked(id);
    for (const path of ["/runs", `/runs/${id}`]) {
      await phone.goto(ui(path));
      expect(await phone.evaluate("document.documentElement.scrollWidth"), path).toBeLessThanOrEqual(390);
    }
    await screenshot(phone, "console-run-phone");
    await phone.close();
    await stack.request("POST", `/v1/runs/${id}/cancel`, {}, asA);
  });
});
