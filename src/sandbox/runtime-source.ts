/**
 * The JavaScript that runs inside every script's isolate before the script: deterministic `Date`
 * and `Math.random`, the `ToolError` class, the promise table of calls in flight, and the three
 * entry points the host drives (attach, start, feed). It is kept as source text because it
 * must run in the isolate's realm, where no host object may ever enter: it talks to the host
 * only through one copied-arguments callback that takes and returns JSON strings.
 */

/** Filename V8 reports for frames inside this runtime; the host strips them from stacks. */
export const RUNTIME_FILENAME = "rewind:runtime";

/** Name of the one-shot global the runtime leaves for the internal module to pick up. */
export const INTERNAL_GLOBAL = "__rewindInternal";

/**
 * Evaluated as a script; its completion value is the control object the host keeps a
 * Reference to. `__rewindHost` is deleted from the global before any script code runs.
 */
export const RUNTIME_SOURCE = String.raw`
(function () {
  "use strict";
  const host = globalThis.__rewindHost;
  delete globalThis.__rewindHost;
  const options = JSON.parse(host("options", "{}"));
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const pending = new Map();
  let now = options.startedAt;
  let script = undefined;

  // Deterministic clock: the workflow time of the step being handled.
  const RealDate = Date;
  function RewindDate(...args) {
    if (!new.target) return new RealDate(now).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [now] : args, new.target);
  }
  Object.defineProperties(RewindDate, {
    prototype: { value: RealDate.prototype },
    now: { value: function now_() { return now; } },
    parse: { value: RealDate.parse },
    UTC: { value: RealDate.UTC },
  });
  Object.defineProperty(RealDate.prototype, "constructor", { value: RewindDate });
  globalThis.Date = RewindDate;

  // Deterministic randomness: sfc32 seeded from the run id.
  let [a, b, c, d] = options.seed;
  Math.random = function random() {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };

  // The heap limit holds ordinary ArrayBuffers, but not the memory V8 reserves itself for
  // WebAssembly memories, shared and resizable buffers: scripts get none of those.
  delete globalThis.WebAssembly;
  delete globalThis.SharedArrayBuffer;
  const FixedArrayBuffer = new Proxy(ArrayBuffer, {
    construct(target, args, newTarget) {
      const options = args[1];
      if (typeof options === "object" && options !== null && options.maxByteLength !== undefined) throw new TypeError("resizable ArrayBuffers are not available to scripts");
      return Reflect.construct(target, [args[0]], newTarget);
    },
  });
  Object.defineProperty(ArrayBuffer.prototype, "constructor", { value: FixedArrayBuffer });
  globalThis.ArrayBuffer = FixedArrayBuffer;

  class ToolError extends Error {
    constructor(code, message, init) {
      super(message);
      this.name = "ToolError";
      this.code = code;
      this.tool = init && typeof init.tool === "string" ? init.tool : "";
      this.seq = init && typeof init.seq === "number" ? init.seq : 0;
      if (init && init.details !== undefined) this.details = init.details;
    }
  }
  const toToolError = (data) => new ToolError(data.code, data.message, data);

  function format(value) {
    if (typeof value === "string") return value;
    try { return stringify(value) ?? String(value); } catch { return String(value); }
  }
  const log = (level) => (...args) => { host("log", stringify({ level, line: args.map(format).join(" ") })); };
  globalThis.console = Object.freeze({
    log: log("info"), info: log("info"), debug: log("debug"), warn: log("warn"), error: log("error"),
  });

  function issue(tool, args) {
    let json;
    try {
      json = stringify({ tool, args: args === undefined ? null : args });
    } catch (error) {
      return Promise.reject(new ToolError("invalidArguments", tool + ": arguments must be JSON: " + String(error && error.message), { tool }));
    }
    const reply = parse(host("call", json));
    if (reply.refused) return Promise.reject(toToolError(reply.refused));
    return new Promise((resolve, reject) => { pending.set(reply.seq, { resolve, reject }); });
  }

  function group(name, tools) {
    const methods = {};
    for (const tool of tools) {
      const qualified = name + "." + tool;
      methods[tool] = { [tool](args) { return issue(qualified, args); } }[tool];
    }
    return Object.freeze(methods);
  }

  function workflow(name) {
    return Object.freeze({
      start(input) {
        return issue("rewind.workflows.start", { workflow: name, input: input === undefined ? null : input }).then((started) => Object.freeze({
          runId: started.runId,
          result() { return issue("rewind.workflows.result", { runId: started.runId }); },
        }));
      },
      signal(runId, signal, payload) { return issue("rewind.workflows.signal", { workflow: name, runId, signal, payload: payload === undefined ? null : payload }); },
    });
  }

  function describeError(error) {
    if (error instanceof Error) {
      const out = { name: String(error.name), message: String(error.message), stack: String(error.stack || "") };
      if (error instanceof ToolError) { out.code = error.code; out.tool = error.tool; out.seq = error.seq; }
      return out;
    }
    return { name: "Error", message: "the script threw a non-Error value: " + format(error) };
  }

  function settle(ok, value) {
    if (ok) {
      let json;
      try { json = stringify(value === undefined ? null : value); }
      catch (error) { host("failed", stringify({ name: "TypeError", message: "the script's result is not JSON: " + String(error && error.message) })); return; }
      host("done", json ?? "null");
    } else {
      host("failed", stringify(describeError(value)));
    }
  }

  globalThis.${INTERNAL_GLOBAL} = Object.freeze({
    ToolError,
    group,
    workflow,
    sleep(duration) { return issue("rewind.sleep", { duration }); },
    waitForSignal(name, opts) { return issue("rewind.waitForSignal", { name, timeout: opts && opts.timeout !== undefined ? opts.timeout : null }); },
    webhook(name) { return issue("rewind.webhook", { name }); },
    fetch(url, init) {
      return issue("http.fetch", { url: String(url), init: init === undefined ? null : init }).then((raw) => {
        const body = raw.body;
        return Object.freeze({
          status: raw.status, statusText: raw.statusText, ok: raw.status >= 200 && raw.status < 300,
          url: raw.url, redirected: raw.redirects > 0, headers: Object.freeze({ ...raw.headers }), bodyEncoding: raw.bodyEncoding,
          text() { return Promise.resolve(body); },
          json() { try { return Promise.resolve(parse(body)); } catch (error) { return Promise.reject(error); } },
        });
      });
    },
    attach(namespace) { script = namespace; },
  });

  return Object.freeze({
    start(inputJson) {
      if (script === undefined) { settle(false, new Error("the script did not finish loading (top-level await is not supported; await inside the default export)")); return; }
      const main = script.default;
      if (typeof main !== "function") { settle(false, new TypeError("the script's default export must be a function")); return; }
      let result;
      try { result = main(parse(inputJson)); } catch (error) { settle(false, error); return; }
      Promise.resolve(result).then((value) => settle(true, value), (error) => settle(false, error));
    },
    feed(eventJson, at) {
      now = at;
      const event = parse(eventJson);
      const waiter = pending.get(event.seq);
      if (!waiter) return;
      pending.delete(event.seq);
      if (event.ok) waiter.resolve(event.value);
      else waiter.reject(toToolError(event.error));
    },
  });
})();
`;
