import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';

// Telemetry's entry: the OpenTelemetry SDK and its exporters are imported here, and only when
// `telemetry.enabled` is true, so a
// gateway with telemetry off never loads them.

export interface Telemetry {
  shutdown(): Promise<void>;
}

/** Restarts the SDK with another `telemetry` section (a config reload that changed it). */
export interface TelemetrySwitch {
  apply(next: Pick<Config, 'telemetry'>): Promise<void>;
}

/** Whether telemetry runs: `telemetry.enabled`, unless OTEL_SDK_DISABLED=true (OpenTelemetry's own switch). */
export function telemetryWanted(config: Pick<Config, 'telemetry'>, env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return config.telemetry.enabled;
}

/**
 * Starts the SDK when telemetry is wanted (null otherwise); `registry`'s series are exported as
 * OTLP metrics too. `warn` is told of each OTEL_* variable whose value is ignored.
 */
export async function startTelemetry(config: Pick<Config, 'telemetry'>, registry: Registry | null, warn?: (message: string) => void): Promise<Telemetry | null> {
  if (!telemetryWanted(config)) return null;
  const [{ startSdk }, bridge] = await Promise.all([import('./sdk.js'), registry ? import('./prometheus-bridge.js') : null]);
  return startSdk(config.telemetry, bridge && registry ? bridge.prometheusProducer(registry) : null, process.env, warn);
}
