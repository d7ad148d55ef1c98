/**
 * The harness's tickets MCP server lives at one fixed address, so the toolset naming it has one
 * content-addressed id and every `npm run example` reuses it: the server `npm run example:server`
 * keeps running there, or, when nothing listens on the port, one started here for this run.
 */
import { startTicketsServer, ticketsUrl } from "./tickets-server.ts";

export interface TicketsEndpoint {
  url: string;
  /** True when this process serves it (and stops it on close). */
  startedHere: boolean;
  close(): Promise<void>;
}

export async function useOrStartTicketsServer(port: number): Promise<TicketsEndpoint> {
  try {
    const server = await startTicketsServer({ port });
    return { url: server.url, startedHere: true, close: () => server.close() };
  } catch (error) {
    // Taken: the standalone server (or whatever holds the port; registering will tell).
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return { url: ticketsUrl(port), startedHere: false, close: async () => undefined };
  }
}
