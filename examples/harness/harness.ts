/**
 * A small harness on Rewind: it starts an MCP server, serves the host tool `harness.ask_user`
 * (answered in this terminal), registers a toolset, shows the declarations a model would see,
 * runs the model's script, waits for the approval the script needs, and prints the result.
 *
 *   npm start                      # in one terminal: Temporal, the Rewind worker and the API
 *   npm run example                # in another: this harness (add -- --yes to answer for you)
 */
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline/promises";
import { createHostToolWorker } from "../../src/sdk/index.ts";
import { startTicketsServer } from "./tickets-server.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : fallback;
};
const api = option("--api", "http://127.0.0.1:8787");
const temporal = option("--temporal", "127.0.0.1:7233");
const autoAnswer = args.includes("--yes");

async function call(method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(api + route, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} → ${response.status} ${text}`);
  return text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : { text };
}

async function ask(question: string): Promise<boolean> {
  if (autoAnswer) {
    console.log(`? ${question} (answered yes by --yes)`);
    return true;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y/i.test(await rl.question(`? ${question} [y/n] `));
  } finally {
    rl.close();
  }
}

const tickets = await startTicketsServer();
const worker = await createHostToolWorker({
  address: temporal,
  taskQueue: "example-harness",
  tools: { "harness.ask_user": async ({ question }) => ({ yes: await ask(String(question)) }) },
});
const serving = worker.run();

try {
  const toolset = await call("POST", "/v1/toolsets", {
    mcpServers: { tickets: { url: tickets.url } },
    hostTools: {
      harness: {
        taskQueue: "example-harness",
        tools: {
          ask_user: {
            description: "Ask the user a yes/no question in the terminal.",
            inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
            outputSchema: { type: "object", properties: { yes: { type: "boolean" } }, required: ["yes"] },
          },
        },
      },
    },
    policies: { "tickets.create_ticket": { approval: true, onInterruption: "retry" } },
  });
  console.log(`toolset ${String(toolset["id"])}\n\nWhat the model sees:\n`);
  console.log((await call("GET", `/v1/toolsets/${String(toolset["id"])}/declarations?format=prompt`))["text"]);

  const script = await readFile(new URL("./script.ts", import.meta.url), "utf8");
  const run = await call("POST", "/v1/runs", {
    toolset: toolset["id"],
    script,
    input: { title: "Checkout page is slow" },
  });
  const id = String(run["id"]);
  console.log(`\nrun ${id}  ${String(run["temporalUrl"] ?? "")}`);

  for (;;) {
    const state = await call("GET", `/v1/runs/${id}`);
    if (state["status"] === "parked") {
      const [parked] = state["parked"] as { seq: number; tool: string; args: unknown }[];
      if (parked) {
        console.log(`\nparked: call ${parked.seq} ${parked.tool}(${JSON.stringify(parked.args)}) waits for approval`);
        console.log(`  approve from another terminal: npx rewind runs approve ${id} ${parked.seq}`);
        console.log(`  (or: curl -X POST ${api}/v1/runs/${id}/calls/${parked.seq}/approve)`);
        if (autoAnswer) await call("POST", `/v1/runs/${id}/calls/${parked.seq}/approve`);
        else console.log("  waiting for the approval…");
        while ((await call("GET", `/v1/runs/${id}`))["status"] === "parked")
          await new Promise((resolve) => setTimeout(resolve, 300));
      }
    } else if (state["status"] !== "running") {
      console.log(`\n${String(state["status"])}: ${JSON.stringify(state["result"] ?? state["error"])}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
} finally {
  await worker.shutdown();
  await serving;
  await tickets.close();
}
