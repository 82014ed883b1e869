import { errors } from '../../http/errors.js';
import { fieldTooDeep, readJsonField } from '../../http/json-field.js';
import type { HubEffort, HubMessage, HubPart, HubReasoning, HubResponse, HubStop, HubUsage } from './types.js';

// Small pieces every codec needs: data URLs, tool arguments, reasoning effort ↔ budget, and the
// merging of consecutive turns.

/** `data:<media type>;base64,<data>` → its parts; null when it is not that shape. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const head = url.slice(5, comma);
  if (!head.endsWith(';base64')) return null;
  const mediaType = head.slice(0, -7);
  if (!mediaType.includes('/')) return null;
  return { mediaType, data: url.slice(comma + 1) };
}

/**
 * Tool arguments a model produced, as an object. Arguments that are not a JSON object cannot be
 * one; they become {} rather than a made-up key (formats that need an object: Anthropic, Gemini).
 */
export function argsObject(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  // Past the JSON body limits (too deep to serialize again) they cannot be one either.
  const parsed = readJsonField(args);
  const v = parsed.ok ? parsed.value : null;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Tool arguments a client sent back in its history: must be a JSON object (400 otherwise). */
export function clientArgs(args: unknown, where: string): string {
  if (args == null || args === '') return '{}';
  if (typeof args === 'string') {
    const parsed = readJsonField(args);
    if (!parsed.ok && parsed.problem === 'too_deep') throw fieldTooDeep(where);
    const v = parsed.ok ? parsed.value : null;
    if (v && typeof v === 'object' && !Array.isArray(v)) return args;
  } else if (typeof args === 'object' && !Array.isArray(args)) {
    return JSON.stringify(args);
  }
  throw errors.invalidRequest(`${where} must be a JSON object.`, where);
}

/**
 * Reasoning effort ↔ thinking budget. The budgets are the points Anthropic and Google document as
 * typical for light, normal and deep thinking; 1024 is Anthropic's minimum.
 */
const BUDGETS: Record<HubEffort, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

export function budgetOf(r: HubReasoning): number {
  return r.budgetTokens ?? BUDGETS[r.effort ?? 'medium'];
}

export function effortOf(r: HubReasoning): HubEffort {
  if (r.effort) return r.effort;
  const b = r.budgetTokens ?? BUDGETS.medium;
  if (b <= BUDGETS.minimal) return 'minimal';
  if (b <= BUDGETS.low) return 'low';
  if (b <= BUDGETS.medium) return 'medium';
  return 'high';
}

/** Appends parts to the conversation, joining them to the last message when it has the same role. */
export function appendTurn(messages: HubMessage[], role: HubMessage['role'], parts: HubPart[]): void {
  if (!parts.length) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role) {
    // Tool results go first in a user turn (Anthropic requires it; the others do not mind).
    if (role === 'user' && parts.every((p) => p.type === 'tool_result')) {
      const at = last.parts.findIndex((p) => p.type !== 'tool_result');
      if (at >= 0) {
        last.parts.splice(at, 0, ...parts);
        return;
      }
    }
    last.parts.push(...parts);
    return;
  }
  messages.push({ role, parts });
}

/** Gives every tool result the name of the call it answers (Gemini matches results by name). */
export function nameToolResults(messages: HubMessage[]): void {
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === 'tool_call') names.set(p.id, p.name);
      else if (p.type === 'tool_result' && !p.name) {
        const n = names.get(p.callId);
        if (n) p.name = n;
      }
    }
  }
}

export function textOfParts(parts: HubPart[]): string {
  let s = '';
  for (const p of parts) if (p.type === 'text') s += p.text;
  return s;
}

export function reasoningOfParts(parts: HubPart[]): string {
  let s = '';
  for (const p of parts) if (p.type === 'reasoning') s += p.text;
  return s;
}

export function toolCallsOf(parts: HubPart[]): Extract<HubPart, { type: 'tool_call' }>[] {
  return parts.filter((p): p is Extract<HubPart, { type: 'tool_call' }> => p.type === 'tool_call');
}

/** A short unique-enough id for items the gateway names itself. */
export function localId(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

/** A stop reason for an answer that ended on a tool call even when the upstream said "stop". */
export function settleStop(r: HubResponse): HubStop {
  if (r.stop === 'end' && r.parts.some((p) => p.type === 'tool_call')) return 'tool';
  return r.stop;
}

/** The hub's usage from a format's counts: cached input and reasoning are kept only when non-zero. */
export function hubUsageOf(input: number, output: number, cachedInput?: number, reasoning?: number): HubUsage {
  const out: HubUsage = { input, output };
  if (cachedInput) out.cachedInput = cachedInput;
  if (reasoning) out.reasoning = reasoning;
  return out;
}
