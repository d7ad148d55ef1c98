/** The metrics settings: no listener unless a port is given, loopback unless told otherwise, and wrong values refused at start. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("metrics configuration", () => {
  it("opens no listener by default, and listens on loopback when only a port is given", () => {
    expect(loadConfig({}).metrics).toEqual({ port: undefined, address: "127.0.0.1" });
    expect(loadConfig({ REWIND_METRICS_PORT: "9464" }).metrics).toEqual({ port: 9464, address: "127.0.0.1" });
    expect(loadConfig({ REWIND_METRICS_PORT: "9464", REWIND_METRICS_ADDRESS: "0.0.0.0" }).metrics).toEqual({
      port: 9464,
      address: "0.0.0.0",
    });
    expect(loadConfig({ REWIND_METRICS_PORT: "0", REWIND_METRICS_ADDRESS: "[::1]" }).metrics).toEqual({
      port: 0,
      address: "::1",
    });
  });

  it("refuses an address without a port, a port out of range and an address that is neither IP nor host name", () => {
    expect(() => loadConfig({ REWIND_METRICS_ADDRESS: "0.0.0.0" })).toThrow(
      new ConfigError("REWIND_METRICS_ADDRESS needs REWIND_METRICS_PORT (the address of the metrics listener)"),
    );
    expect(() => loadConfig({ REWIND_METRICS_PORT: "70000" })).toThrow(
      /REWIND_METRICS_PORT must be an integer between 0 and 65535/,
    );
    expect(() => loadConfig({ REWIND_METRICS_PORT: "9464", REWIND_METRICS_ADDRESS: "http://0.0.0.0" })).toThrow(
      /REWIND_METRICS_ADDRESS must be an IP address or a host name/,
    );
  });
});
