/**
 * Toolsets as the API uses them: register (pin, address, store), and look up by id with the
 * declarations rendered once per toolset. The empty toolset (built-ins only) always exists, so
 * a run that names no toolset needs no registration. The workflows a toolset pins are read for
 * their declared input types; a stored script's id is the digest of its content, type included,
 * so the declarations of one toolset id never change.
 */
import { renderDts, renderPrompt } from "../declarations/index.ts";
import { EMPTY_TOOLSET, type PinnedToolset, type StoredScript } from "../shared/index.ts";
import type { ObservedResults } from "../shared/index.ts";
import { pinToolset, type PinDeps } from "./pin-toolset.ts";
import type { OmittedTool, RegisterToolsetBody } from "../contract/index.ts";
import { RegistrationError } from "./registration-error.ts";
import { InFlight, STORED_SCRIPT_ID_PATTERN, toolsetId } from "../storage/index.ts";
import type { ToolsetStore } from "../storage/index.ts";

export interface ResolvedToolset {
  id: string;
  document: PinnedToolset;
  dts: string;
  prompt: string;
  /** The observed result shapes both renderings were made with, for renderings made on request. */
  observed: ObservedResults;
  /** The declared input types of the pinned workflows by name, those that declare one; likewise. */
  workflowInputs: Record<string, string>;
}

export interface ToolsetRegistry {
  /** The toolset runs get when they name none. */
  readonly empty: ResolvedToolset;
  /** `omittedTools`: tools of the servers left out because a schema of theirs can't be used. */
  register(
    namespace: string,
    request: RegisterToolsetBody,
  ): Promise<{ toolset: ResolvedToolset; created: boolean; omittedTools: OmittedTool[] }>;
  get(id: string, namespace: string): Promise<ResolvedToolset | undefined>;
}

export interface RegistryDeps {
  /** Result shapes runs observed for the toolset's tools without an output schema. */
  loadObserved?(namespace: string, id: string): Promise<ObservedResults>;
  store: ToolsetStore;
  listTools: PinDeps["listTools"];
  /** A stored script of the namespace (toolsets pin them by id), or undefined when there is none. */
  loadStoredScript(namespace: string, id: string): Promise<Pick<StoredScript, "inputType"> | undefined>;
}

export function resolveToolset(
  document: PinnedToolset,
  id = toolsetId(document),
  observed: ObservedResults = {},
  workflowInputs: Record<string, string> = {},
): ResolvedToolset {
  return {
    id,
    document,
    dts: renderDts(document, { observed, workflowInputs }),
    prompt: renderPrompt(document, { observed, workflowInputs }),
    observed,
    workflowInputs,
  };
}

/** Observed shapes change as runs record results; each toolset's are re-read at most this often. */
const OBSERVED_TTL_MS = 3_000;

const MAX_RESOLVED = 256;

export function createToolsetRegistry(deps: RegistryDeps): ToolsetRegistry {
  const empty = resolveToolset(EMPTY_TOOLSET);
  const resolved = new Map<string, ResolvedToolset>([[empty.id, empty]]);
  const remember = (toolset: ResolvedToolset) => {
    if (resolved.size >= MAX_RESOLVED) resolved.clear();
    resolved.set(toolset.id, toolset);
    return toolset;
  };

  const observedCache = new Map<string, { at: number; key: string }>();

  /** The input types of the workflows `document` pins; `missing` answers for a workflow not stored. */
  async function workflowInputsOf(
    namespace: string,
    document: PinnedToolset,
    missing: (name: string, id: string) => void = () => undefined,
  ): Promise<Record<string, string>> {
    const inputs: Record<string, string> = {};
    for (const [name, id] of Object.entries(document.workflows)) {
      const stored = STORED_SCRIPT_ID_PATTERN.test(id) ? await deps.loadStoredScript(namespace, id) : undefined;
      if (!stored) missing(name, id);
      else if (stored.inputType !== undefined) inputs[name] = stored.inputType;
    }
    return inputs;
  }

  /** Reads of observed shapes under way, by toolset: the runs started meanwhile wait for the same one. */
  const refreshing = new InFlight<ResolvedToolset>();

  async function get(id: string, namespace: string): Promise<ResolvedToolset | undefined> {
    if (id === empty.id) return empty;
    const document = await deps.store.load(namespace, id);
    if (!document) return undefined;
    const cacheKey = `${namespace}/${id}`;
    const fresh = observedCache.get(cacheKey);
    if (fresh && Date.now() - fresh.at < OBSERVED_TTL_MS) {
      const hit = resolved.get(fresh.key);
      if (hit) return hit;
    }
    // Two hundred runs posted at once ask once: each read is a query answered by the toolset's
    // record workflow, one at a time.
    return refreshing.share(cacheKey, () => withObserved(namespace, id, document, cacheKey));
  }

  /** The toolset rendered with its observed shapes read afresh, remembered for the next lookups. */
  async function withObserved(
    namespace: string,
    id: string,
    document: PinnedToolset,
    cacheKey: string,
  ): Promise<ResolvedToolset> {
    const observed = deps.loadObserved ? await deps.loadObserved(namespace, id).catch(() => ({})) : {};
    const key = `${id}:${JSON.stringify(observed)}`;
    observedCache.set(cacheKey, { at: Date.now(), key });
    const hit = resolved.get(key);
    if (hit) return hit;
    const toolset = resolveToolset(document, id, observed, await workflowInputsOf(namespace, document));
    if (resolved.size >= MAX_RESOLVED) resolved.clear();
    resolved.set(key, toolset);
    return toolset;
  }

  return {
    empty,
    get,
    async register(namespace, request) {
      const { document, omittedTools } = await pinToolset(request, {
        listTools: deps.listTools,
        loadBase: async (id) => (await get(id, namespace))?.document,
      });
      const workflowInputs = await workflowInputsOf(namespace, document, (name, id) => {
        throw new RegistrationError(
          404,
          `workflows.${name}: no stored workflow ${id} in this namespace (store it with POST /v1/workflows)`,
          { field: `workflows.${name}` },
        );
      });
      const id = toolsetId(document);
      const created = await deps.store.save(namespace, id, document);
      return {
        toolset: resolved.get(id) ?? remember(resolveToolset(document, id, {}, workflowInputs)),
        created,
        omittedTools,
      };
    },
  };
}
