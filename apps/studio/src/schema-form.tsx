import { useState } from "react";

type Schema = Record<string, unknown>;

/** The fields a JSON Schema object describes (top level only), or null when it is not one. */
function fieldsOf(schema: Schema | null) {
  if (schema?.type !== "object" || typeof schema.properties !== "object" || !schema.properties) return null;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(schema.properties as Record<string, Schema>).map(([name, s]) => ({
    name,
    type: typeof s.type === "string" ? s.type : "string",
    enum: Array.isArray(s.enum) ? (s.enum as unknown[]) : null,
    description: typeof s.description === "string" ? s.description : undefined,
    required: required.has(name),
  }));
}

/**
 * A form generated from an interrupt's JSON Schema: a field per top-level property (text, number,
 * checkbox, or a choice for an enum); any other schema, or none, gets a JSON editor.
 */
export function SchemaForm({
  schema,
  idPrefix,
  onChange,
  initial,
}: {
  schema: Schema | null;
  idPrefix: string;
  onChange: (value: unknown, valid: boolean) => void;
  initial?: unknown;
}) {
  const fields = fieldsOf(schema);
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    initial && typeof initial === "object" ? { ...(initial as Record<string, unknown>) } : {},
  );
  const [text, setText] = useState(() => (initial === undefined ? "" : JSON.stringify(initial, null, 2)));
  if (!fields) {
    return (
      <label className="json-field">
        Payload (JSON)
        <textarea
          value={text}
          rows={4}
          onChange={(e) => {
            setText(e.target.value);
            try {
              onChange(JSON.parse(e.target.value), true);
            } catch {
              onChange(undefined, false);
            }
          }}
        />
      </label>
    );
  }
  const set = (name: string, value: unknown) => {
    const next = { ...values, [name]: value };
    setValues(next);
    onChange(
      next,
      fields.every((f) => !f.required || (next[f.name] !== undefined && next[f.name] !== "")),
    );
  };
  return (
    <fieldset className="schema-form">
      <legend>Payload</legend>
      {fields.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        return (
          <div className="field" key={f.name}>
            <label htmlFor={id}>
              {f.name}
              {f.required ? " *" : ""}
            </label>
            {f.enum ? (
              <select
                id={id}
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
              >
                <option value="">—</option>
                {f.enum.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : f.type === "boolean" ? (
              <input
                id={id}
                type="checkbox"
                checked={values[f.name] === true}
                onChange={(e) => set(f.name, e.target.checked)}
              />
            ) : f.type === "number" || f.type === "integer" ? (
              <input
                id={id}
                type="number"
                value={values[f.name] === undefined ? "" : String(values[f.name])}
                onChange={(e) => set(f.name, e.target.value === "" ? undefined : Number(e.target.value))}
              />
            ) : (
              <input
                id={id}
                type="text"
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
              />
            )}
            {f.description ? <small className="muted">{f.description}</small> : null}
          </div>
        );
      })}
    </fieldset>
  );
}
