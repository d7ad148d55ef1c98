/**
 * The http tool's fetcher, as the rest of Rewind sees it: the activity that runs a script's
 * `fetch` builds one with `createGuardedFetcher` and turns an `HttpRefusal` into a refused
 * `ToolError`. The classifier and allow-list matcher are exported for toolset validation and tests.
 * The same address rules guard the URLs tenants choose for Rewind itself to dial (MCP servers,
 * events endpoints): `createTargetPolicy`, whose refusals are `TargetRefusal`s.
 */
export { createGuardedFetcher } from "./fetcher.ts";
export type { GuardedFetch, GuardedFetcherOptions, HttpToolResponse } from "./fetcher.ts";
export type { HttpToolRequest } from "./request-check.ts";
export { HttpRefusal } from "./http-refusal.ts";
export type { HttpRefusalRule } from "./http-refusal.ts";
export { classifyAddress } from "./address-policy.ts";
export type { AddressPolicyOptions, AddressVerdict } from "./address-policy.ts";
export { checkAllowList } from "./allow-list.ts";
export type { AllowListVerdict } from "./allow-list.ts";
export { defaultResolver } from "./resolve.ts";
export type { ResolvedAddress, Resolver } from "./resolve.ts";
export { createTargetPolicy } from "./target-policy.ts";
export type { TargetFetch, TargetPolicy, TargetPolicyOptions, TargetSession } from "./target-policy.ts";
export { TargetRefusal, targetRefusalIn } from "./target-refusal.ts";
export { NO_TRUSTED_TARGETS } from "./trusted-targets.ts";
export type { TrustedTargets } from "./trusted-targets.ts";
