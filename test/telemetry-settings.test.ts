import { describe, expect, it } from 'vitest';
import { validateConfig } from '../src/config-file/loader.js';
import { protocolFor, samplerFrom } from '../src/telemetry/sdk.js';
import { telemetryWanted } from '../src/telemetry/index.js';

// OpenTelemetry's standard environment variables win over the telemetry config section.

const settings = (telemetry: Record<string, unknown>) => validateConfig({ telemetry }, 'test').telemetry;

describe('telemetry settings', () => {
  it('is off by default, on with telemetry.enabled, off again with OTEL_SDK_DISABLED=true', () => {
    expect(telemetryWanted({ telemetry: settings({}) }, {})).toBe(false);
    expect(telemetryWanted({ telemetry: settings({ enabled: true }) }, {})).toBe(true);
    expect(telemetryWanted({ telemetry: settings({ enabled: true }) }, { OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
  });

  it('takes the sampler from OTEL_TRACES_SAMPLER(_ARG) before the config', () => {
    const s = settings({ sampler: 'parentbased_traceidratio', sampler_arg: 0.1 });
    expect(samplerFrom(s, {}).toString()).toMatch(/ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
    expect(samplerFrom(s, { OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(samplerFrom(s, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toBe('TraceIdRatioBased{0.25}');
    expect(samplerFrom(settings({}), {}).toString()).toMatch(/ParentBased\{root=AlwaysOnSampler/);
  });

  it('takes the protocol from the signal’s variable, then the general one, then the config', () => {
    const s = settings({ protocol: 'http/json' });
    expect(protocolFor('TRACES', s, {})).toBe('http/json');
    expect(protocolFor('TRACES', s, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(protocolFor('METRICS', s, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' })).toBe('http/json');
    // grpc is not offered: the config's protocol stays.
    expect(protocolFor('TRACES', s, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('http/json');
  });

  it('refuses a telemetry section it does not know, saying what is allowed', () => {
    expect(() => settings({ sampler: 'sometimes' })).toThrow(/sampler/);
    expect(() => settings({ protocol: 'grpc' })).toThrow(/protocol/);
  });
});
