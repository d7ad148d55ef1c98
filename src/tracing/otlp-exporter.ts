/**
 * The one place that picks an OTLP exporter for the configured protocol
 * (OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, read in config.ts): protobuf over HTTP by default, as
 * the OTLP exporter specification says, JSON over HTTP, or gRPC (headers become metadata; an
 * `http://` endpoint is plaintext, `https://` TLS).
 */
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { createEmptyMetadata } from "@opentelemetry/otlp-grpc-exporter-base";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { OtlpProtocol } from "../config.ts";

export interface OtlpOptions {
  /** The traces endpoint: a URL with its path over HTTP, `http(s)://host:port` over gRPC. */
  url: string;
  headers: Record<string, string>;
  /** Default `http/protobuf`. */
  protocol?: OtlpProtocol;
}

export function createOtlpExporter(options: OtlpOptions): SpanExporter {
  const { url, headers } = options;
  switch (options.protocol ?? "http/protobuf") {
    case "http/protobuf":
      return new ProtobufExporter({ url, headers });
    case "http/json":
      return new JsonExporter({ url, headers });
    case "grpc": {
      const metadata = createEmptyMetadata();
      for (const [name, value] of Object.entries(headers)) metadata.set(name.toLowerCase(), value);
      return new GrpcExporter({ url, metadata });
    }
  }
}
