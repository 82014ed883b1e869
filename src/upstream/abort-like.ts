/**
 * What the upstream client needs of a signal that ends a call early (the client's departure): whether
 * it fired (and why), and a callback when it does. An AbortSignal is one; so is the lighter
 * LightSignal the chat path uses (src/http/departure.ts). undici takes any object with addEventListener.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
