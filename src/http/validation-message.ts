// One readable sentence per invalid field from a request schema's errors. Ajv reports a union of
// literals (`role: "system" | "user" | …`) as one "must be equal to constant" per branch plus a
// closing "must match a schema in anyOf", so a wrong role read the same words six times and never
// said what is allowed. Errors are grouped by field; a field whose every branch is a constant or an
// enum reads "must be one of a, b, c"; other messages are said once each.

export interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/messages/0/role` under `body` → `messages[0].role`; the body itself → `body`. */
export function fieldName(context: string, instancePath: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const path = parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
  return path || context;
}

function allowedValues(errors: SchemaError[]): unknown[] | null {
  const values: unknown[] = [];
  for (const e of errors) {
    if (e.keyword === 'const') values.push(e.params?.allowedValue);
    else if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)) values.push(...(e.params.allowedValues as unknown[]));
    else if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') return null;
  }
  return values.length ? [...new Set(values)] : null;
}

function describe(e: SchemaError): string {
  if (e.keyword === 'required') return `must have the field ${String(e.params?.missingProperty)}`;
  if (e.keyword === 'additionalProperties') return `has an unknown field ${String(e.params?.additionalProperty)}`;
  return e.message ?? 'is invalid';
}

/** "role must be one of system, user, assistant, tool" (and the like), each field said once. */
export function validationMessage(context: string, errors: SchemaError[]): string {
  const byField = new Map<string, SchemaError[]>();
  for (const e of errors) {
    const list = byField.get(e.instancePath) ?? [];
    list.push(e);
    byField.set(e.instancePath, list);
  }
  const sentences: string[] = [];
  for (const [path, list] of byField) {
    const field = fieldName(context, path);
    const allowed = allowedValues(list);
    if (allowed) {
      sentences.push(`${field} must be one of ${allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`);
      continue;
    }
    // The closing anyOf adds nothing when its branches said what was wrong.
    const said = list.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
    const messages = [...new Set((said.length ? said : list).map(describe))];
    sentences.push(`${field} ${messages.join(' or ')}`);
  }
  return sentences.join('; ');
}
