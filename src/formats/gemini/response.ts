import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import type { ClientOptions } from '../hub/codec.js';
import type { HubPart, HubResponse, HubStop, HubUsage } from '../hub/types.js';
import { argsObject, hubUsageOf, localId, settleStop } from '../hub/util.js';

// Gemini GenerateContentResponse ↔ the hub.

type Json = Record<string, any>;

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function geminiStop(reason: string | undefined | null): HubStop {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && FILTERED.has(reason)) return 'content_filter';
  return 'end';
}

export function finishReasonOf(s: HubStop): string {
  if (s === 'length') return 'MAX_TOKENS';
  if (s === 'content_filter') return 'SAFETY';
  return 'STOP';
}

/** Gemini counts thinking apart from the candidates' tokens; the hub's output holds both. */
export function hubUsageOfGemini(u: Json | undefined | null): HubUsage | null {
  if (!u || typeof u !== 'object') return null;
  const thoughts = Number(u.thoughtsTokenCount ?? 0);
  return hubUsageOf(Number(u.promptTokenCount ?? 0), Number(u.candidatesTokenCount ?? 0) + thoughts, Number(u.cachedContentTokenCount ?? 0), thoughts);
}

export function geminiUsageOf(u: HubUsage | null): Json {
  const input = u?.input ?? 0;
  const output = u?.output ?? 0;
  const thoughts = u?.reasoning ?? 0;
  const out: Json = { promptTokenCount: input, candidatesTokenCount: Math.max(0, output - thoughts), totalTokenCount: input + output };
  if (thoughts) out.thoughtsTokenCount = thoughts;
  if (u?.cachedInput) out.cachedContentTokenCount = u.cachedInput;
  return out;
}

/** The hub parts of a candidate's parts (function calls without an id get one). */
export function partsOfGemini(parts: Json[] | undefined): HubPart[] {
  const out: HubPart[] = [];
  for (const p of parts ?? []) {
    if (typeof p?.text === 'string') {
      if (!p.text) continue;
      out.push(p.thought === true ? { type: 'reasoning', text: p.text } : { type: 'text', text: p.text });
    } else if (p?.functionCall) {
      const fc = p.functionCall;
      out.push({ type: 'tool_call', id: typeof fc.id === 'string' && fc.id ? fc.id : localId('call_'), name: String(fc.name ?? ''), arguments: JSON.stringify(fc.args ?? {}) });
    }
  }
  return out;
}

export function decodeGeminiResponse(text: string): HubResponse {
  const r = parseUpstreamJson(text, 200) as Json;
  if (!r || typeof r !== 'object' || (!Array.isArray(r.candidates) && !r.promptFeedback)) throw new UpstreamFailure('malformed', 'the upstream answer is not a generateContent response', 200);
  const c = r.candidates?.[0];
  const stop: HubStop = !c && r.promptFeedback?.blockReason ? 'content_filter' : geminiStop(c?.finishReason);
  return { id: r.responseId ?? '', model: r.modelVersion ?? '', parts: partsOfGemini(c?.content?.parts), stop, usage: hubUsageOfGemini(r.usageMetadata) };
}

/** Gemini parts of the hub's answer parts. */
export function geminiPartsOf(parts: HubPart[]): Json[] {
  const out: Json[] = [];
  for (const p of parts) {
    if (p.type === 'reasoning') out.push({ text: p.text, thought: true });
    else if (p.type === 'text') out.push({ text: p.text });
    else if (p.type === 'tool_call') out.push({ functionCall: { id: p.id, name: p.name, args: argsObject(p.arguments) } });
  }
  return out;
}

export function encodeGeminiResponse(r: HubResponse, opts: ClientOptions): Json {
  const parts = geminiPartsOf(r.parts);
  return {
    candidates: [{ content: { role: 'model', parts: parts.length ? parts : [{ text: '' }] }, finishReason: finishReasonOf(settleStop(r)), index: 0 }],
    usageMetadata: geminiUsageOf(r.usage),
    modelVersion: r.model || opts.model,
    responseId: r.id || localId(''),
  };
}
