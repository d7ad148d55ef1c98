/**
 * The one file that imports ajv: compiles a tool's JSON Schema with the ajv class of its
 * dialect (draft-04 through ajv-draft-04, draft-06 and draft-07 with Ajv, 2019-09 with
 * Ajv2019, 2020-12 with Ajv2020) and says why a schema can't be used when it can't.
 *
 * Scopes: an ajv instance registers every `$id` it compiles, process-wide, so a schema is
 * compiled where nothing else can be seen. One shared instance per dialect compiles the
 * schemas that declare no id, and forgets each right after (it then holds only its
 * meta-schemas); a schema that declares ids gets a fresh instance of its own. So `$ref` reaches
 * the schema's own definitions and ids (and the dialects' meta-schemas), never another tool's
 * schema: two tools may pin different schemas under one `$id`.
 */
import { Ajv, MissingRefError, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import draft06Meta from "ajv/dist/refs/json-schema-draft-06.json" with { type: "json" };
import ajvDraft04 from "ajv-draft-04";
import addFormatsModule from "ajv-formats";
import type { JsonSchema } from "../shared/index.ts";
import { linearRegExp, unsupportedPatterns } from "./linear-patterns.ts";
import { CANONICAL_META, declaresIds, dialectOf, type SchemaDialect } from "./schema-dialect.ts";

export type SchemaProblemReason = "unsupportedDialect" | "unresolvableRef" | "invalidSchema" | "unsupportedPattern";

/** Why a schema can't be used to validate anything. */
export interface SchemaProblem {
  reason: SchemaProblemReason;
  message: string;
}

/**
 * A schema compiled, or why it can't be. `refused` is set when the schema validates but is not
 * accepted at registration: a pattern the linear-time engine can't run (linear-patterns.ts).
 */
export type CompiledSchema =
  { validate: ValidateFunction; dialect: SchemaDialect; refused?: SchemaProblem } | { problem: SchemaProblem };

/** What this file needs of an ajv instance, whatever its class. */
type AjvInstance = Pick<Ajv, "compile" | "validateSchema" | "errorsText" | "errors" | "removeSchema" | "addMetaSchema">;

// CommonJS modules whose default export TypeScript sees as the module object.
const AjvDraft04 = ajvDraft04.default;
const addFormats = addFormatsModule as unknown as (ajv: AjvInstance) => void;

// Unknown keywords and formats are tolerated: the server, not Rewind, owns them. Schemas are
// checked against their meta-schema by the shared instance, once, not by every fresh one.
// Patterns run on RE2 (linear-patterns.ts), never on JavaScript's backtracking engine.
const OPTIONS = {
  strict: false,
  allErrors: true,
  validateFormats: true,
  validateSchema: false,
  code: { regExp: linearRegExp },
} as const;

function createAjv(dialect: SchemaDialect): AjvInstance {
  const ajv: AjvInstance =
    dialect === "draft-04"
      ? new AjvDraft04(OPTIONS)
      : dialect === "2019-09"
        ? new Ajv2019(OPTIONS)
        : dialect === "2020-12"
          ? new Ajv2020(OPTIONS)
          : new Ajv(OPTIONS);
  if (dialect === "draft-06") ajv.addMetaSchema(draft06Meta);
  addFormats(ajv);
  return ajv;
}

const shared = new Map<SchemaDialect, AjvInstance>();

function sharedAjv(dialect: SchemaDialect): AjvInstance {
  let ajv = shared.get(dialect);
  if (!ajv) {
    ajv = createAjv(dialect);
    shared.set(dialect, ajv);
  }
  return ajv;
}

const problem = (reason: SchemaProblemReason, message: string): CompiledSchema => ({ problem: { reason, message } });

/** Compiles a schema in its dialect and scope; never throws. */
export function compileSchema(schema: JsonSchema): CompiledSchema {
  const found = dialectOf(schema);
  if ("unsupported" in found) return problem("unsupportedDialect", found.unsupported);
  const { dialect } = found;
  // The meta-schema is looked up by its exact URI: spell it as the dialect's class registers it.
  const source =
    typeof schema === "object" && schema["$schema"] !== undefined && schema["$schema"] !== CANONICAL_META[dialect]
      ? { ...schema, $schema: CANONICAL_META[dialect] }
      : schema;
  const checker = sharedAjv(dialect);
  if (checker.validateSchema(source) !== true)
    return problem(
      "invalidSchema",
      `not a valid ${dialect} schema: ${checker.errorsText(checker.errors, { dataVar: "" })}`,
    );
  const own = declaresIds(source);
  const ajv = own ? createAjv(dialect) : checker;
  try {
    const validate = ajv.compile(source);
    const unsupported = unsupportedPatterns(source);
    if (unsupported.length === 0) return { validate, dialect };
    const listed = unsupported.map(({ pattern, reason }) => `${JSON.stringify(pattern)} (${reason})`).join("; ");
    const refused: SchemaProblem = {
      reason: "unsupportedPattern",
      message: `a pattern Rewind's linear-time regex engine (RE2, which has no backreferences or lookaround) can't run: ${listed}`,
    };
    return { validate, dialect, refused };
  } catch (error) {
    if (error instanceof MissingRefError)
      return problem("unresolvableRef", `${error.message} (a $ref may point only inside the tool's own schema)`);
    return problem("invalidSchema", error instanceof Error ? error.message : String(error));
  } finally {
    if (!own && typeof source === "object") ajv.removeSchema(source);
  }
}
