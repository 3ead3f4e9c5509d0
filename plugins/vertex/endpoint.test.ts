/** Vertex AI URLs: regional and global hosts, publisher model paths, Express mode paths. */
import { describe, expect, it } from 'vitest';
import { publisherModelPath, vertexBaseUrl } from './endpoint.ts';

describe('vertexBaseUrl', () => {
  it('is {location}-aiplatform.googleapis.com, and aiplatform.googleapis.com for global', () => {
    expect(vertexBaseUrl('us-central1')).toBe('https://us-central1-aiplatform.googleapis.com');
    expect(vertexBaseUrl('europe-west4')).toBe('https://europe-west4-aiplatform.googleapis.com');
    expect(vertexBaseUrl('global')).toBe('https://aiplatform.googleapis.com');
  });
});

describe('publisherModelPath', () => {
  const site = { project: 'my-proj', location: 'us-east5', apiVersion: 'v1' };

  it('names project, location, publisher, model and method', () => {
    expect(publisherModelPath(site, 'google', 'gemini-2.5-flash', 'generateContent')).toBe('/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(publisherModelPath({ ...site, apiVersion: 'v1beta1' }, 'google', 'gemini-2.5-flash', 'streamGenerateContent?alt=sse')).toBe(
      '/v1beta1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it("keeps a Claude model's @version, drops a models/ or publishers/x/models/ prefix, escapes the rest", () => {
    expect(publisherModelPath(site, 'anthropic', 'claude-sonnet-4-5@20250929', 'rawPredict')).toBe(
      '/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
    );
    expect(publisherModelPath(site, 'google', 'models/gemini-2.5-pro', 'countTokens')).toBe('/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:countTokens');
    expect(publisherModelPath(site, 'google', 'publishers/google/models/gemini-2.5-pro', 'predict')).toBe('/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:predict');
    expect(publisherModelPath(site, 'google', 'a?b#c', 'predict')).toBe('/v1/projects/my-proj/locations/us-east5/publishers/google/models/a%3Fb%23c:predict');
  });

  it('Express mode (no project): the model without project and location', () => {
    expect(publisherModelPath({ location: 'global', apiVersion: 'v1' }, 'google', 'gemini-2.5-flash', 'generateContent')).toBe('/v1/publishers/google/models/gemini-2.5-flash:generateContent');
  });
});
