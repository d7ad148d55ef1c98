/** The console (`/ui`): pages for people to follow runs and decide what they wait for. */
export { createConsole, CONTENT_SECURITY_POLICY, type ConsoleDeps } from "./console-app.ts";
