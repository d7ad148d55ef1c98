/**
 * The large toolset's tools (large-toolset.ts) served for real: one MCP server per group, each
 * tool answering with its own qualified name and arguments as structured content, and the
 * `mcpServers` of a toolset that names them all.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FixtureTool } from "./large-toolset.ts";
import { startMcpServer, type TestMcpServer } from "./mcp-test-server.ts";

export interface GatewayServers {
  servers: TestMcpServer[];
  /** A toolset's `mcpServers`, one per group, named after it. */
  mcpServers: Record<string, { url: string }>;
  close(): Promise<void>;
}

export async function startGatewayServers(tools: FixtureTool[], pageSize = 50): Promise<GatewayServers> {
  const groups = [...new Set(tools.map((tool) => tool.group))];
  const servers = await Promise.all(
    groups.map((group) =>
      startMcpServer({
        pageSize,
        tools: tools
          .filter((tool) => tool.group === group)
          .map((tool) => ({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
            handler: async (args: Record<string, unknown>): Promise<CallToolResult> => ({
              content: [],
              structuredContent: { tool: `${tool.group}.${tool.name}`, args },
            }),
          })),
      }),
    ),
  );
  return {
    servers,
    mcpServers: Object.fromEntries(groups.map((group, i) => [group, { url: servers[i]?.url ?? "" }])),
    close: async () => void (await Promise.all(servers.map((s) => s.close()))),
  };
}
