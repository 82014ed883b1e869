import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config-file/loader.js';

// Channel settings are checked against those the channel's provider type declares when the
// configuration loads (Vertex AI: project required, region and storage URI of a given form).

const config = (channel: Record<string, unknown>) => ({
  channels: [{ name: 'vertex', type: 'vertex', base_url: 'https://us-central1-aiplatform.googleapis.com', api_key: '{}', models: ['veo-3.1-generate-001'], ...channel }],
  models: { 'veo-3.1-generate-001': { kind: 'video', modes: ['text'] } },
});

describe('channel settings', () => {
  it('accepts the declared settings', () => {
    const c = validateConfig(config({ settings: { project: 'my-project', region: 'europe-west4', storage_uri: 'gs://bucket/veo/' } }));
    expect(c.channels[0].settings).toEqual({ project: 'my-project', region: 'europe-west4', storage_uri: 'gs://bucket/veo/' });
  });

  it('refuses a missing required setting, an unknown one and a malformed one, naming what is allowed', () => {
    expect(() => validateConfig(config({}))).toThrow(/channels\[0\]\.settings\.project: required for a vertex channel \(the Google Cloud project id\)/);
    expect(() => validateConfig(config({ settings: { project: 'my-project', location: 'x' } }))).toThrow(/settings\.location: a vertex channel takes settings project, region, storage_uri, storage_url/);
    expect(() => validateConfig(config({ settings: { project: 'my-project', storage_uri: 'https://bucket' } }))).toThrow(/settings\.storage_uri: must match .*\(got "https:\/\/bucket"\)/);
  });

  it('refuses settings on a type that declares none', () => {
    const c = config({ type: 'kling', api_secret: 's', settings: { project: 'p' } });
    expect(() => validateConfig(c)).toThrow(/settings\.project: a kling channel takes no settings/);
  });
});
