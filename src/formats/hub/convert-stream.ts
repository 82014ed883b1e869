import { approxTokens, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { SseEvent } from '../sse.js';
import type { StreamDecoder, StreamEncoder } from './codec.js';
import type { HubEvent, HubUsage } from './types.js';

/**
 * A stream converted through the hub: the upstream format's decoder turns each event into hub
 * events, the client format's encoder turns those into frames. Usage, the finish and how much
 * was delivered are tracked here once for every pair of formats.
 */
export class ConvertingStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private readonly hubUsage: Partial<HubUsage> = {};
  private chars = 0;
  private finished = false;

  constructor(
    private readonly decoder: StreamDecoder,
    readonly encoder: StreamEncoder,
  ) {}

  get deliveredTokens(): number {
    return approxTokens(this.chars);
  }

  push(ev: SseEvent): string {
    let out = '';
    for (const e of this.decoder.push(ev)) out += this.apply(e);
    return out;
  }

  final(): unknown {
    return this.encoder.final?.();
  }

  end(): string | null {
    if (this.complete) return '';
    // The upstream said how it finished; only its end marker is missing (Gemini has none at all).
    if (this.finished) return this.close();
    return null;
  }

  private apply(e: HubEvent): string {
    switch (e.type) {
      case 'usage':
        Object.assign(this.hubUsage, definedOnly(e.usage));
        if (e.usage.input != null) this.usage.input = e.usage.input;
        if (e.usage.output != null) this.usage.output = e.usage.output;
        if (e.usage.cachedInput != null) this.usage.cachedInput = e.usage.cachedInput;
        if (e.usage.cacheWrite != null) this.usage.cacheWrite = e.usage.cacheWrite;
        break;
      case 'text':
      case 'reasoning':
        this.chars += e.text.length;
        break;
      case 'tool_call':
        this.chars += (e.args?.length ?? 0) + (e.name?.length ?? 0);
        break;
      case 'finish':
        this.finished = true;
        break;
      case 'done':
        return this.complete ? '' : this.close();
      default:
        break;
    }
    return this.encoder.push(e);
  }

  private close(): string {
    this.complete = true;
    return this.encoder.end({
      ...this.hubUsage,
      input: this.usage.input ?? 0,
      output: this.usage.output ?? this.deliveredTokens,
    });
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v != null) (out as Record<string, unknown>)[k] = v;
  return out;
}
