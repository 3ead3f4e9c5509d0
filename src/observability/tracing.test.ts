import { describe, expect, it } from 'vitest';
import type { TracingConfig } from '../config/types.ts';
import { resolveTracing } from './tracing-settings.ts';

const section = (fields: Partial<TracingConfig> = {}): TracingConfig => ({ enabled: true, protocol: 'http/protobuf', serviceName: 'switchyard', sampleRatio: 1, captureContent: false, ...fields });

describe('resolveTracing', () => {
  it('is off without a section or an OTLP endpoint variable, and when disabled', () => {
    expect(resolveTracing(undefined, {})).toBeUndefined();
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBeUndefined();
    expect(resolveTracing(section({ enabled: false }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(resolveTracing(section(), { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('posts to <endpoint>/v1/traces, the signal-specific variable as given', () => {
    expect(resolveTracing(section({ endpoint: 'http://collector:4318/' }), {})!.url).toBe('http://collector:4318/v1/traces');
    expect(resolveTracing(section(), {})!.url).toBe('http://localhost:4318/v1/traces');
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toMatchObject({ url: 'http://c:4318/v1/traces', source: 'environment' });
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:9999/custom' })!.url).toBe('http://c:9999/custom');
    expect(resolveTracing(section({ endpoint: 'http://file:4318' }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318' })!.url).toBe('http://file:4318/v1/traces');
  });

  it('merges headers (the file wins) and reads protocol, service name and batching from the environment', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-a=1,x-b=2',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-b=3',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'edge',
      OTEL_BSP_SCHEDULE_DELAY: '250',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
    };
    expect(resolveTracing(undefined, env)).toMatchObject({
      headers: { 'x-a': '1', 'x-b': '3' },
      protocol: 'http/json',
      serviceName: 'edge',
      timeoutMillis: 2000,
      batch: { scheduledDelayMillis: 250 },
    });
    expect(resolveTracing(section({ headers: { 'x-b': 'file' }, serviceName: 'named' }), env)).toMatchObject({
      headers: { 'x-a': '1', 'x-b': 'file' },
      protocol: 'http/protobuf',
      serviceName: 'named',
    });
  });

  it('falls back to http/protobuf for a protocol it does not speak, saying so', () => {
    const warnings: string[] = [];
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, (m) => warnings.push(m))!.protocol).toBe('http/protobuf');
    expect(warnings).toEqual([expect.stringContaining('"grpc" is not supported')]);
  });
});
