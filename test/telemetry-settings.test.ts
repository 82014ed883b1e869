import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../src/config-file/loader.js';
import { protocolFor, samplerFrom, startSdk } from '../src/telemetry/sdk.js';
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

  it('ignores a variable it does not accept, as if unset, and says so; names are case-insensitive', () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    const s = settings({ sampler: 'parentbased_traceidratio', sampler_arg: 0.1, protocol: 'http/json' });
    expect(samplerFrom(s, { OTEL_TRACES_SAMPLER: 'sometimes' }, warn).toString()).toMatch(/ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
    expect(warnings.pop()).toBe('OTEL_TRACES_SAMPLER="sometimes" is ignored: it must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio');
    expect(samplerFrom(s, { OTEL_TRACES_SAMPLER: 'TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: 'half' }, warn).toString()).toBe('TraceIdRatioBased{0.1}');
    expect(warnings.pop()).toBe('OTEL_TRACES_SAMPLER_ARG="half" is ignored: it must be a number from 0 to 1');
    // The signal's own variable, when it is not accepted, gives way to the general one.
    expect(protocolFor('TRACES', s, { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/Protobuf' }, warn)).toBe('http/protobuf');
    expect(warnings).toEqual(['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc" is ignored: it must be one of http/protobuf, http/json']);
    expect(protocolFor('METRICS', s, { OTEL_EXPORTER_OTLP_PROTOCOL: '' }, warn)).toBe('http/json');
    expect(warnings).toHaveLength(1);
  });

  it('warns once per ignored variable when the SDK starts', async () => {
    const warnings: string[] = [];
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'x' };
    // A receiver that takes the final metrics export at shutdown.
    const receiver = createServer((req, res) => req.resume().on('end', () => res.end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    try {
      const running = await startSdk(settings({ enabled: true, endpoint, metrics: true, metrics_interval_ms: 3_600_000 }), null, env, (m) => warnings.push(m));
      await running.shutdown();
    } finally {
      receiver.close();
    }
    expect(warnings.sort()).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is ignored: it must be one of http/protobuf, http/json',
      'OTEL_TRACES_SAMPLER="x" is ignored: it must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
    ]);
  });

  it('refuses a telemetry section it does not know, saying what is allowed', () => {
    expect(() => settings({ sampler: 'sometimes' })).toThrow(/sampler/);
    expect(() => settings({ protocol: 'grpc' })).toThrow(/protocol/);
  });
});
