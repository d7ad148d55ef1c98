/**
 * The MCP front door's surface for the rest of the API: the front door the app serves at
 * `/v1/toolsets/{id}/mcp`, and what the route hands it.
 */
export { createFrontDoor, type FrontDoor, type FrontDoorOptions } from "./front-door.ts";
export type { FrontDoorScope } from "./front-door-types.ts";
export { frontDoorTools, INLINE_PROMPT_CHARS } from "./front-door-tools.ts";
