/** The API's public surface. */
export { createApp, type ApiDeps } from "./app.ts";
export { createRunService, type RunService } from "./run-service.ts";
export { HttpError } from "./http-error.ts";
export { answerRefusedRequests } from "./refused-requests.ts";
export { createOpenRunCounter } from "./open-runs.ts";
export { createWaitingApp, WAITING_FOR_TEMPORAL_MESSAGE } from "./waiting-app.ts";
export { createFrontDoor, type FrontDoor } from "./front-door/index.ts";
