/**
 * A JSON call to a simulator part spoken to directly: `call(method, path, body?, headers?)` answers
 * the status and the parsed body (undefined for an empty one, such as a 204). `url` is read at each
 * call, so a simulator started in beforeAll can be named before it exists.
 */
export function simCall(url: () => string, defaults: () => Record<string, string>) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = defaults()) => {
    const res = await fetch(`${url()}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  };
}
