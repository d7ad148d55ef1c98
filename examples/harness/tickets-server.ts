/**
 * The example's MCP server: a tiny ticket tracker made with the official MCP SDK, served over
 * streamable HTTP on a free loopback port. It honours Rewind's idempotency key, so a retried
 * `create_ticket` never opens two tickets.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const tickets: { number: number; title: string; priority: string }[] = [];
const byKey = new Map<string, number>();

function buildServer(): McpServer {
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

export async function startTicketsServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    // Stateless: one server and transport per request, as the SDK's stateless example does.
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
