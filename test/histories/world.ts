/**
 * The servers the history scenarios talk to — MCP servers made with the official SDK, a loopback
 * HTTP site, a host tool worker made with Rewind's SDK, an events receiver — and the toolsets
 * and stored workflows registered over them. They live in the driving process, so they outlive
 * the Rewind stacks an upgrade test starts and stops under them.
 */
import { randomUUID } from "node:crypto";
import { createHostToolWorker, type HostToolWorker } from "../../src/sdk/index.ts";
import { billingTools } from "../helpers/billing-tools.ts";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startLoopbackServer, type LoopbackServer } from "../helpers/http-loopback.ts";
import { startMcpServer } from "../helpers/mcp-test-server.ts";
import { droppingTool, echoTool, effectCounterTool, failingTool } from "../helpers/mcp-test-tools.ts";
import {
  FRESH_TOKEN,
  OLD_TICKET_SCHEMA,
  createTicketTool,
  ok,
  type ApiAnswer,
  type ScenarioWorld,
  type Toolsets,
} from "./scenarios.ts";

/** The made-up host name the worker's injected resolver maps to the loopback site. */
export const HTTP_HOST_NAME = "api.test";

export interface World extends ScenarioWorld {
  site: LoopbackServer;
  receiver: EventReceiver;
  /** Points the world at a (new) stack's APIs. */
  useApis(apis: { main: string; continueAsNew: string }): void;
  /** Registers toolsets and stored workflows, and the events endpoint, through the current API. */
  prepare(): Promise<Toolsets>;
  /** Starts the host tool worker against a Temporal server (once; it survives stack restarts). */
  startHostWorker(address: string, namespace: string): Promise<void>;
  close(): Promise<void>;
}

/** One JSON request to the API at `base`; the answer's status and body, whatever the status. */
export async function callApi(base: string, method: string, route: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(base + route, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

export async function startWorld(): Promise<World> {
  const mcp = await startMcpServer({
    tools: [
      echoTool("echo"),
      effectCounterTool().tool,
      droppingTool({ dropAttempts: 1 }).tool,
      effectCounterTool({ name: "once" }).tool,
      failingTool("no such thing", "fail"),
    ],
  });
  const guarded = await startMcpServer({ tools: [echoTool("whoami")], requiredAuthorization: `Bearer ${FRESH_TOKEN}` });
  const changing = await startMcpServer({ tools: [createTicketTool(OLD_TICKET_SCHEMA)] });
  const billing = await startMcpServer({ tools: billingTools().tools });
  const site = await startLoopbackServer((req, res) => {
    req.resume();
    req.on("end", () =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ hello: "world", method: req.method })),
    );
  });
  const receiver = await startEventReceiver();
  const hostTaskQueue = `history-host-${randomUUID()}`;
  let apis = { main: "", continueAsNew: "" };
  let host: HostToolWorker | undefined;
  let hostRunning: Promise<void> | undefined;

  const api = (
    method: string,
    route: string,
    body?: unknown,
    options: { continueAsNew?: boolean } = {},
  ): Promise<ApiAnswer> => callApi(options.continueAsNew ? apis.continueAsNew : apis.main, method, route, body);

  return {
    api,
    apiUrl: () => apis.main,
    mcp,
    billing,
    guarded,
    changing,
    site,
    receiver,
    httpHost: `${HTTP_HOST_NAME}:${site.port}`,
    hostTaskQueue,
    useApis(next) {
      apis = next;
    },
    async prepare() {
      const register = async (document: unknown) =>
        String((await ok(api("POST", "/v1/toolsets", document), "registering a toolset")).body["id"]);
      const store = async (name: string, script: string) =>
        String((await ok(api("POST", "/v1/workflows", { name, script }), "storing a workflow")).body["id"]);
      const endpoint = await ok(
        api("PUT", "/v1/events/endpoint", { url: receiver.url }),
        "setting the events endpoint",
      );
      receiver.setSecret(String(endpoint.body["secret"]));
      const guardedId = await register({
        mcpServers: { guarded: { url: guarded.url } },
        credentials: { mcpServers: { guarded: { headers: { authorization: `Bearer ${FRESH_TOKEN}` } } } },
      });
      await ok(
        api("PUT", `/v1/toolsets/${guardedId}/credentials`, {
          mcpServers: { guarded: { headers: { authorization: "Bearer stale-token" } } },
        }),
        "storing stale credentials",
      );
      const listener = await store(
        "listener",
        `import { webhook, waitForSignal } from "rewind:tools";
export default async (input: { label: string }) => { await webhook("go"); return { label: input.label, heard: await waitForSignal<string>("go") }; };`,
      );
      const double = await store("double", "export default async (input: { n: number }) => input.n * 2;");
      return {
        main: await register({
          mcpServers: { svc: { url: mcp.url } },
          policies: { "svc.record_effect": { approval: true }, "svc.once": { onInterruption: "at_most_once" } },
        }),
        guarded: guardedId,
        changing: await register({ mcpServers: { tickets: { url: changing.url } } }),
        http: await register({ http: { allowedHosts: [`${HTTP_HOST_NAME}:${site.port}`] } }),
        host: await register({
          hostTools: {
            harness: {
              taskQueue: hostTaskQueue,
              tools: {
                ask: {
                  description: "Ask the user.",
                  inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
                },
                flaky: { inputSchema: { type: "object" } },
              },
            },
          },
        }),
        children: await register({ workflows: { listener, double } }),
      };
    },
    async startHostWorker(address, namespace) {
      if (host) return;
      host = await createHostToolWorker({
        address,
        namespace,
        taskQueue: hostTaskQueue,
        tools: {
          "harness.ask": async (args) => ({ yes: String(args["question"]).includes("?") }),
          "harness.flaky": async (_args, ctx) => {
            if (ctx.attempt < 2) throw new Error("a transient failure");
            return { attempt: ctx.attempt };
          },
        },
      });
      hostRunning = host.run();
    },
    async close() {
      await host?.shutdown();
      await hostRunning;
      await Promise.all([
        mcp.close(),
        billing.close(),
        guarded.close(),
        changing.close(),
        site.close(),
        receiver.close(),
      ]);
    },
  };
}
