/**
 * The MCP server the bench calls: the official SDK's low-level `Server` over its streamable HTTP
 * transport on 127.0.0.1, with one cheap tool (`echo`, which answers its `i` as structured
 * content), so what is measured is the path to the tool and not the tool, and `blob`, which
 * answers text of exactly `bytes` bytes (for the large-results scenario). It notes when the
 * first `tools/call` of each Rewind run arrives, for the start-latency measurement. At
 * `/mcp/tools-<count>` the same server offers `count` tools (the two, then generated ones), for
 * the large-toolset scenario.
 */
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { toolCountOf, toolList } from "./generated-tools.ts";
import { epochMs } from "./stats.ts";

export const ECHO_TOOL: Tool = {
  name: "echo",
  description: "Answers with its argument `i`.",
  inputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
  outputSchema: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
};

export const BLOB_TOOL: Tool = {
  name: "blob",
  description: "Answers text of exactly `bytes` bytes, different for each `seed`.",
  inputSchema: {
    type: "object",
    properties: { bytes: { type: "integer" }, seed: { type: "string" } },
    required: ["bytes", "seed"],
  },
};

/** The largest result `blob` makes: Rewind takes MCP results up to 16 MiB. */
const MAX_BLOB_BYTES = 16 * 1024 * 1024;

/**
 * `bytes` bytes of ASCII text for `seed`: the seed's SHA-256 in hex, repeated. A new seed for
 * every call keeps a content-addressed payload store from answering a call with a file it
 * already holds.
 */
export function blobText(bytes: number, seed: string): string {
  const unit = createHash("sha256").update(seed).digest("hex");
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

const IDEMPOTENCY_META_KEY = "codes.rewind/idempotency-key";

export interface BenchMcpServer {
  url: string;
  /** Tool calls answered so far. */
  readonly calls: number;
  /** tools/list requests answered so far (one per page; this server answers in one page). */
  readonly listings: number;
  /** Epoch ms at which the first tools/call of each run (by idempotency key prefix) arrived. */
  firstArrivals: Map<string, number>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

function runIdOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || (body as { method?: unknown }).method !== "tools/call")
    return undefined;
  const meta = (body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const key = meta?.[IDEMPOTENCY_META_KEY];
  return typeof key === "string" ? key.slice(0, key.indexOf("/")) : undefined;
}

export async function startBenchMcpServer(): Promise<BenchMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const firstArrivals = new Map<string, number>();
  let calls = 0;

  const lists = new Map<number, Tool[]>();
  const toolsAt = (pathname: string): Tool[] => {
    const count = toolCountOf(pathname);
    if (count === undefined) return [ECHO_TOOL, BLOB_TOOL];
    const list = lists.get(count) ?? toolList([ECHO_TOOL, BLOB_TOOL], count);
    lists.set(count, list);
    return list;
  };
  let listings = 0;

  function sessionServer(tools: Tool[]): Server {
    const server = new Server({ name: "rewind-bench", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      listings++;
      return { tools };
    });
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      calls++;
      if (request.params.name === BLOB_TOOL.name) {
        const bytes = Math.min(
          Math.max(0, Math.trunc(Number(request.params.arguments?.["bytes"] ?? 0))),
          MAX_BLOB_BYTES,
        );
        return { content: [{ type: "text", text: blobText(bytes, String(request.params.arguments?.["seed"] ?? "")) }] };
      }
      const i = Number(request.params.arguments?.["i"] ?? 0);
      return { content: [{ type: "text", text: JSON.stringify({ i }) }], structuredContent: { i } };
    });
    return server;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = epochMs();
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const runId = runIdOf(body);
    if ((runId?.startsWith("run_") || runId?.startsWith("plain_")) && !firstArrivals.has(runId))
      firstArrivals.set(runId, arrivedAt);
    const header = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId === undefined) {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await sessionServer(toolsAt(new URL(req.url ?? "/", "http://127.0.0.1").pathname)).connect(transport);
      return transport.handleRequest(req, res, body);
    }
    const transport = sessions.get(sessionId);
    if (!transport) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    return transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get calls() {
      return calls;
    },
    get listings() {
      return listings;
    },
    firstArrivals,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
