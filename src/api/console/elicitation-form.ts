/**
 * The form for a server's question (an MCP elicitation), built from the schema the server asked
 * for, and the answer read back from what the form posted. MCP asks for a flat object of
 * primitive properties: each becomes a labelled field whose HTML constraints say what the browser
 * can check before sending (required, type, length, range, choices). The API's schema check
 * stays the judge: what the browser cannot check (a format stricter than the browser's, a rule
 * it has no attribute for) comes back as the API's 422, shown beside the form with what was
 * typed kept. A property of another type is answered as JSON in a textarea.
 */
import { html, type Html } from "./html.ts";

/** Form fields carry the property's name after this prefix, apart from the form's own fields. */
const PREFIX = "field.";

type Kind = "string" | "number" | "integer" | "boolean" | "enum" | "json";

interface Field {
  property: string;
  kind: Kind;
  required: boolean;
  schema: Record<string, unknown>;
}

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function kindOf(schema: Record<string, unknown>): Kind {
  if (Array.isArray(schema["enum"]) && schema["enum"].every((v) => typeof v === "string")) return "enum";
  switch (schema["type"]) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "integer":
      return "integer";
    case "boolean":
      return "boolean";
    default:
      return "json";
  }
}

function fieldsOf(requested: unknown): Field[] {
  const schema = asRecord(requested);
  const required = new Set(Array.isArray(schema["required"]) ? schema["required"].map(String) : []);
  return Object.entries(asRecord(schema["properties"])).map(([property, value]) => {
    const propertySchema = asRecord(value);
    return { property, kind: kindOf(propertySchema), required: required.has(property), schema: propertySchema };
  });
}

const INPUT_TYPES: Record<string, string> = { email: "email", uri: "url", date: "date" };

function numberAttrs(field: Field): Html {
  const min = field.schema["minimum"];
  const max = field.schema["maximum"];
  return html`step="${field.kind === "integer" ? "1" : "any"}" ${typeof min === "number" ? html`min="${min}"` : ""}
  ${typeof max === "number" ? html`max="${max}"` : ""}`;
}

function stringAttrs(field: Field): Html {
  const minLength = field.schema["minLength"];
  const maxLength = field.schema["maxLength"];
  return html`${typeof minLength === "number" ? html`minlength="${minLength}"` : ""}
  ${typeof maxLength === "number" ? html`maxlength="${maxLength}"` : ""}`;
}

function control(field: Field, id: string, value: string | undefined): Html {
  const name = PREFIX + field.property;
  const required = field.required ? html`required` : "";
  const input = (type: string, limits: Html) =>
    html`<input id="${id}" name="${name}" type="${type}" ${limits} value="${value ?? ""}" ${required} />`;
  switch (field.kind) {
    case "boolean":
      return html`<input
        id="${id}"
        name="${name}"
        type="checkbox"
        value="true"
        ${value === "true" ? html`checked` : ""}
      />`;
    case "enum": {
      const options = (field.schema["enum"] as string[]).map((option, i) => {
        const names = field.schema["enumNames"];
        const label = Array.isArray(names) && typeof names[i] === "string" ? names[i] : option;
        return html`<option value="${option}" ${value === option ? html`selected` : ""}>${label}</option>`;
      });
      return html`<select id="${id}" name="${name}" ${required}>
        ${field.required ? "" : html`<option value="">(no answer)</option>`}${options}
      </select>`;
    }
    case "number":
    case "integer":
      return input("number", numberAttrs(field));
    case "string": {
      const format = field.schema["format"];
      return input((typeof format === "string" && INPUT_TYPES[format]) || "text", stringAttrs(field));
    }
    case "json":
      return html`<textarea id="${id}" name="${name}" rows="3" data-json ${required}>${value ?? ""}</textarea>`;
  }
}

/** The fields for the schema, filled with what was posted last (`values`, the form's own field names). */
export function elicitationFields(requested: unknown, idPrefix: string, values: Record<string, string>): Html {
  const fields = fieldsOf(requested);
  if (fields.length === 0) return html`<p class="muted">The server asks for no fields: send, decline or cancel.</p>`;
  return html`${fields.map((field, i) => {
    const id = `${idPrefix}-${i}`;
    const title = field.schema["title"];
    const description = field.schema["description"];
    const format = field.schema["format"];
    return html`<div class="field">
      <label for="${id}"
        >${typeof title === "string" ? title : field.property}${field.required ? " (required)" : ""}
        ${typeof description === "string" ? html`<span class="hint">${description}</span>` : ""}
        ${field.kind === "json" ? html`<span class="hint">as JSON</span>` : ""}
        ${typeof format === "string" && !INPUT_TYPES[format] ? html`<span class="hint">format: ${format}</span>` : ""}
      </label>
      ${control(field, id, values[PREFIX + field.property])}
    </div>`;
  })}`;
}

/**
 * The answer's content from the posted form, as the schema's types have it: numbers as numbers,
 * an unticked box as false, an empty optional field left out. A JSON field that does not parse is
 * a problem said in words, before anything is sent.
 */
export function contentOf(
  requested: unknown,
  posted: Record<string, unknown>,
): { content: Record<string, unknown> } | { problem: string } {
  const entries: [string, unknown][] = [];
  for (const field of fieldsOf(requested)) {
    const raw = posted[PREFIX + field.property];
    const text = typeof raw === "string" ? raw : undefined;
    if (field.kind === "boolean") {
      entries.push([field.property, text === "true"]);
      continue;
    }
    if (text === undefined || text === "") {
      if (field.required && field.kind === "string") entries.push([field.property, ""]);
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") entries.push([field.property, Number(text)]);
    else if (field.kind === "json") {
      try {
        entries.push([field.property, JSON.parse(text)]);
      } catch (error) {
        return {
          problem: `${field.property}: this is not JSON (${error instanceof Error ? error.message : String(error)})`,
        };
      }
    } else entries.push([field.property, text]);
  }
  return { content: Object.fromEntries(entries) };
}

/** What the form posted for its fields, to fill them again beside a refusal. */
export function postedValues(posted: Record<string, unknown>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(posted))
    if (name.startsWith(PREFIX) && typeof value === "string") values[name] = value;
  return values;
}
