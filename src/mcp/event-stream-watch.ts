/**
 * Reads a request's SSE response stream alongside the SDK, to know for certain whether it carried
 * the answer. When a stream ends or breaks, the SDK only reports it to `onerror` and leaves the
 * request waiting for its timeout; and it parses events through transform streams, so it may not
 * have delivered an answer yet when the bytes end. Scanning the bytes decides without timing:
 * a stream that ended without the answer (and without an event id to resume from) is broken now,
 * and one that carried it is closed gracefully even if the socket then broke, so the SDK delivers it.
 */

/** What the scanner needs from the request's watch. */
export interface StreamWatch {
  /** The JSON-RPC id of the request whose answer this stream should carry. */
  requestId: string | number | undefined;
  /** Set when an event carried an id: the SDK resumes such a stream itself if it breaks. */
  resumable: boolean;
  /** Set when an event carried the answer to `requestId`. */
  answered: boolean;
  onBroken(error: Error): void;
}

function isAnswer(data: string, requestId: string | number | undefined): boolean {
  try {
    const message: unknown = JSON.parse(data);
    return (
      typeof message === "object" &&
      message !== null &&
      "id" in message &&
      message.id === requestId &&
      ("result" in message || "error" in message)
    );
  } catch {
    return false;
  }
}

/** Follows the SSE format (fields per line, events end at a blank line) just enough for ids and data. */
function createScanner(watch: StreamWatch): (text: string) => void {
  let buffer = "";
  let data: string[] = [];
  let event = "";
  const line = (text: string) => {
    if (text === "") {
      if (data.length > 0 && (event === "" || event === "message") && isAnswer(data.join("\n"), watch.requestId))
        watch.answered = true;
      data = [];
      event = "";
      return;
    }
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && value !== "") watch.resumable = true;
  };
  return (text) => {
    const lines = (buffer + text).split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? "";
    lines.forEach(line);
  };
}

/** Passes an SSE body through to the SDK unchanged, telling the watch how it ended. */
export function watchEventStream(body: ReadableStream<Uint8Array>, watch: StreamWatch): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const scan = createScanner(watch);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (watch.answered) return controller.close();
        if (!watch.resumable)
          watch.onBroken(
            new Error(`the response stream broke: ${error instanceof Error ? error.message : String(error)}`),
          );
        return controller.error(error);
      }
      if (chunk.done) {
        if (!watch.answered && !watch.resumable)
          watch.onBroken(new Error("the server closed the response stream without answering"));
        return controller.close();
      }
      scan(decoder.decode(chunk.value, { stream: true }));
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
