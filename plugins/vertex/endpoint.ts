/**
 * Vertex AI's URLs (https://cloud.google.com/vertex-ai/docs/reference/rest): a regional host
 * `{location}-aiplatform.googleapis.com` or, for `global`, `aiplatform.googleapis.com`; a
 * publisher model is `{version}/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`.
 * Express mode (an API key, no project) names the model without project and location:
 * `{version}/publishers/google/models/{model}:{method}` on the global host.
 */

/** Where a provider's requests go: the parts of the URL its options decide. */
export interface VertexSite {
  /** Absent in Express mode. */
  project?: string;
  location: string;
  apiVersion: string;
}

/** The default origin for a location. */
export function vertexBaseUrl(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** The path of `{model}:{method}` under a publisher (a model id with `@version` is kept whole, as Vertex names Claude models). */
export function publisherModelPath(site: VertexSite, publisher: string, model: string, method: string): string {
  const name = `publishers/${publisher}/models/${encodeURIComponent(model.replace(/^(publishers\/[^/]+\/)?models\//, '')).replace(/%40/g, '@')}:${method}`;
  if (site.project === undefined) return `/${site.apiVersion}/${name}`;
  return `/${site.apiVersion}/projects/${encodeURIComponent(site.project)}/locations/${encodeURIComponent(site.location)}/${name}`;
}
