/**
 * The examples' MCP server: a tiny ticket tracker made with the official MCP SDK, served over
 * streamable HTTP on loopback. It honours Rewind's idempotency key, so a retried `create_ticket`
 * never opens two tickets. Its tickets live in memory, one list per started server.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

interface Ticket {
  number: number;
  title: string;
  priority: string;
}

function buildServer(tickets: Ticket[], byKey: Map<string, number>): McpServer {
  const server = new McpServer({ name: "tickets", version: "1.0.0" });
  server.registerTool(
    "list_tickets",
    {
      description: "List the open tickets.",
      inputSchema: {},
      outputSchema: { tickets: z.array(z.object({ number: z.number(), title: z.string(), priority: z.string() })) },
    },
    async () => ({ content: [{ type: "text", text: JSON.stringify({ tickets }) }], structuredContent: { tickets } }),
  );
  server.registerTool(
    "create_ticket",
    {
      description: "Open a ticket.",
      inputSchema: { title: z.string(), priority: z.enum(["low", "high"]) },
      outputSchema: { number: z.number() },
    },
    async ({ title, priority }, extra) => {
      const key = String(extra._meta?.["codes.rewind/idempotency-key"] ?? "");
      let number = key ? byKey.get(key) : undefined;
      if (number === undefined) {
        number = tickets.length + 1;
        tickets.push({ number, title, priority });
        if (key) byKey.set(key, number);
      }
      return { content: [{ type: "text", text: JSON.stringify({ number }) }], structuredContent: { number } };
    },
  );
  return server;
}

export interface TicketsServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8788/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** The endpoint a tickets server on `port` (of 127.0.0.1) answers at. */
export function ticketsUrl(port: number): string {
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * Starts a tickets server on 127.0.0.1:`port` (0, the default: a free port). Rejects with the
 * listen error (`EADDRINUSE` when the port is taken).
 */
export async function startTicketsServer(options: { port?: number } = {}): Promise<TicketsServer> {
  const tickets: Ticket[] = [];
  const byKey = new Map<string, number>();
  const http = createServer(async (req, res) => {
    // Stateless: one server and transport per request, as the SDK's stateless example does.
    const server = buildServer(tickets, byKey);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => {
      http.off("error", reject);
      resolve();
    });
  });
  return {
    url: ticketsUrl((http.address() as AddressInfo).port),
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
