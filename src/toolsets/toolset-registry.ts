/**
 * Where the API finds a toolset by id, with its declarations rendered once. The empty toolset
 * (built-ins only) always exists, so a run without a toolset needs no registration.
 */
import { renderDts, renderPrompt } from "../declarations/index.ts";
import { EMPTY_TOOLSET, type PinnedToolset } from "../shared/toolset.ts";
import { toolsetId } from "./toolset-id.ts";

export interface ResolvedToolset {
  id: string;
  document: PinnedToolset;
  dts: string;
  prompt: string;
}

export interface ToolsetRegistry {
  /** The toolset runs get when they name none. */
  readonly empty: ResolvedToolset;
  get(id: string, namespace: string): Promise<ResolvedToolset | undefined>;
}

export function resolveToolset(document: PinnedToolset, id = toolsetId(document)): ResolvedToolset {
  return { id, document, dts: renderDts(document), prompt: renderPrompt(document) };
}

/** A registry that knows only the empty toolset: runs of tool-less scripts. */
export function createBuiltinOnlyRegistry(): ToolsetRegistry {
  const empty = resolveToolset(EMPTY_TOOLSET);
  return {
    empty,
    async get(id) {
      return id === empty.id ? empty : undefined;
    },
  };
}
