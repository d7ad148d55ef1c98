/**
 * The contract between the API and its clients: the request and response bodies of `/v1` (zod
 * schemas the API validates with and the OpenAPI document is generated from, and their types),
 * the shape of ids on the wire, and the wire types the SDK hands to harnesses that live in
 * src/shared/ because workflows carry them too (journal, cassette, host-tool calls).
 *
 * The API and the SDK's client both import their shapes from here, so neither depends on the
 * other. It imports only zod, itself and src/shared/ (lint-enforced). The SDK imports only this
 * folder and src/shared/, plus the index files of the few engine folders whose code it runs
 * in-process: local replay of a cassette runs the sandbox, the declarations and the schema
 * validator; the host-tool worker uses the payload converter and the Temporal connection and
 * runtime (sandbox, declarations, schemas, payloads, temporal, and config.ts). Moving those behind
 * the contract would make the contract the engine; the SDK never imports the server's folders
 * (api, worker, activities, toolsets, storage, credentials, workflows).
 */
export * from "./response-schemas.ts";
export * from "./registration-request.ts";
export * from "./credentials-body.ts";
export * from "./omitted-tool.ts";
export * from "./rollback-schemas.ts";
export * from "./tool-search.ts";
export * from "./mcp-messages.ts";
export * from "./ids.ts";
export type { Cassette, CarriedJournal, JournalView } from "../shared/index.ts";
export type { CallEvent, IssuedCall, JournalEntry, EventBatch, Decider } from "../shared/index.ts";
export type { ElicitationAnswer } from "../shared/index.ts";
export type { HostCallInput } from "../shared/index.ts";
export { HOST_TOOL_ERROR_TYPE } from "../shared/index.ts";
export type { ToolErrorCode } from "../shared/index.ts";
