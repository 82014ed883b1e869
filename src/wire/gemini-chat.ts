// Gemini chat wire facts read by both the client format (formats/gemini) and the simulator's
// Gemini part; plain code without imports, so either may use it.

/**
 * The text of a Gemini `functionResponse.response` (an object). Clients wrap a plain-text tool
 * result in one key — `{result}` (Google's examples and the gateway's own encoding), `{output}`,
 * `{content}`, or the Vercel AI SDK's `{name, content}` — and read as that text; any other object
 * reads as its JSON.
 */
export function functionResponseText(response: unknown, name: string): string {
  if (response && typeof response === 'object' && !Array.isArray(response)) {
    const r = response as Record<string, unknown>;
    const keys = Object.keys(r);
    if (keys.length === 1 && ['result', 'output', 'content'].includes(keys[0]) && typeof r[keys[0]] === 'string') return r[keys[0]] as string;
    if (keys.length === 2 && r.name === name && typeof r.content === 'string') return r.content;
  }
  return JSON.stringify(response ?? {});
}
