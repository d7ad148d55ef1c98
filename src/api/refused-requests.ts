/**
 * Requests Node's HTTP parser refuses before the app sees them (headers or a path past its size
 * limit, a malformed request line, a request too slow to arrive) get the API's error body, like
 * every other refusal, instead of Node's bare status line. The statuses are Node's own.
 */
import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";

const STATUS_OF_PARSER_ERROR: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

const MESSAGE_OF_STATUS: Record<number, string> = {
  431: "the request's headers (or its path) are larger than the API accepts",
  413: "the request's chunk extensions are larger than the API accepts",
  408: "the request did not arrive in time",
  400: "the request is not valid HTTP",
};

/** The raw answer to a request the parser refused: the API's error body, then the connection closes. */
export function refusedRequestAnswer(errorCode: string | undefined): string {
  const status = STATUS_OF_PARSER_ERROR[errorCode ?? ""] ?? 400;
  const code = status === 413 ? "payloadTooLarge" : "badRequest";
  const body = JSON.stringify({ error: { code, message: MESSAGE_OF_STATUS[status] } });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
    "Content-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Connection: close\r\n\r\n" +
    body
  );
}

export function answerRefusedRequests(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A peer that went away (or a socket already answered) has no one to tell.
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(refusedRequestAnswer(error.code));
  });
}
