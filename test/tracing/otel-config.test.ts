/**
 * Traces are configured by OpenTelemetry's own variables: the endpoint, headers, service name,
 * and the protocol (OTEL_EXPORTER_OTLP_PROTOCOL, or its TRACES_ form), http/protobuf unless told.
 * A protocol Rewind can't speak is a start-up error that names the variable and what it takes.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

const load = (env: Record<string, string>) => loadConfig({ REWIND_STATE_DIR: "/srv/rewind", ...env }, "/home/app").otel;

describe("trace export configuration", () => {
  it("is off without an endpoint, and when the SDK or the traces exporter is disabled", () => {
    expect(load({})).toBeUndefined();
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "none" }),
    ).toBeUndefined();
  });

  it("exports protobuf over HTTP by default, to the base endpoint's /v1/traces", () => {
    expect(
      load({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k%201,tenant=a",
        OTEL_SERVICE_NAME: "rewind-eu",
      }),
    ).toEqual({
      url: "http://collector:4318/v1/traces",
      headers: { "x-api-key": "k 1", tenant: "a" },
      protocol: "http/protobuf",
      serviceName: "rewind-eu",
    });
    expect(load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector/custom/path" })).toMatchObject({
      url: "https://collector/custom/path",
      protocol: "http/protobuf",
      serviceName: "rewind",
    });
  });

  it("takes http/json and grpc; over gRPC the base endpoint is used as it is", () => {
    expect(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }),
    ).toMatchObject({ url: "http://collector:4318/v1/traces", protocol: "http/json" });
    expect(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toMatchObject({ url: "https://collector:4317", protocol: "grpc" });
  });

  it("lets the traces variable override the general one", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc",
    };
    expect(load(env)).toMatchObject({ url: "http://collector:4317", protocol: "grpc" });
  });

  it("refuses a protocol it can't speak, naming the variable and the choices", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(() => load({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" })).toThrow(ConfigError);
    expect(() => load({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" })).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf (the default), http/json or grpc, got "http/xml"',
    );
    expect(() => load({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "GRPC" })).toThrow(
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/,
    );
    // Wrong even while no endpoint is set: the mistake shows at start-up, not when one is added.
    expect(() => load({ OTEL_EXPORTER_OTLP_PROTOCOL: "udp" })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });
});
