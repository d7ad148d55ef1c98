/**
 * An MCP client of a toolset's front door (`/v1/toolsets/{id}/mcp`), made with the official SDK's
 * Client and streamable HTTP transport, as any MCP host would connect: with an API key, an end
 * user when asked, and form elicitation when the test answers questions (each question is
 * recorded with its `_meta`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";

export interface FrontDoorClientOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Sent as `X-Rewind-End-User`. */
  endUser?: string;
  /** Declares form elicitation and answers each question with this. */
  answer?: (question: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
}

export interface FrontDoorClient {
  client: Client;
  /** The questions the server asked, in order. */
  asked: ElicitRequest["params"][];
  /** `tools/call`, its answer parsed as a CallToolResult. */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export function frontDoorUrl(apiUrl: string, toolset: string): URL {
  return new URL(`${apiUrl}/v1/toolsets/${toolset}/mcp`);
}

export async function connectFrontDoor(url: URL, options: FrontDoorClientOptions = {}): Promise<FrontDoorClient> {
  const answer = options.answer;
  const client = new Client(
    { name: "front-door-test", version: "1.0.0" },
    { capabilities: answer ? { elicitation: {} } : {} },
  );
  const asked: ElicitRequest["params"][] = [];
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  const headers: Record<string, string> = {
    ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
    ...(options.endUser ? { "x-rewind-end-user": options.endUser } : {}),
  };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return {
    client,
    asked,
    async call(name, args) {
      return CallToolResultSchema.parse(await client.callTool({ name, arguments: args }, CallToolResultSchema));
    },
    close: () => client.close(),
  };
}

/** Clients of the toolsets of an API (`apiUrl()`: its URL now), all closed by `closeAll`. */
export function frontDoorClients(apiUrl: () => string, defaults: FrontDoorClientOptions = {}) {
  const open: FrontDoorClient[] = [];
  return {
    async connect(toolset: string, options: FrontDoorClientOptions = {}): Promise<FrontDoorClient> {
      const client = await connectFrontDoor(frontDoorUrl(apiUrl(), toolset), { ...defaults, ...options });
      open.push(client);
      return client;
    },
    closeAll: () => Promise.all(open.map((client) => client.close().catch(() => undefined))),
  };
}

/** The text of a tool's answer (its first content block). */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}
