/**
 * A Temporal Payload as bytes and back (its protobuf encoding): what drivers store, so a stored
 * payload keeps its metadata (encoding, message type) as well as its data.
 */
import type { Payload } from "@temporalio/common";
import proto from "@temporalio/proto";

const PayloadMessage = proto.temporal.api.common.v1.Payload;

export function encodePayload(payload: Payload): Uint8Array {
  return PayloadMessage.encode(PayloadMessage.fromObject(payload)).finish();
}

export function decodePayload(bytes: Uint8Array): Payload {
  const message = PayloadMessage.decode(bytes);
  return { metadata: message.metadata, data: message.data };
}
