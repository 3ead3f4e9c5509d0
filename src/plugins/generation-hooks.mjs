// Module resolve hook (registered by bin/switchyard.mjs): a module imported by a plugin that was
// loaded for config generation N is loaded for generation N too, so an edit to any file of a
// plugin takes effect on reload, not only an edit to its entry file. Packages (node_modules) and
// the gateway's own sources stay shared, so class identities such as GatewayError hold.
let core = '';

export function initialize(data) {
  core = data?.core ?? '';
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  const parent = context.parentURL;
  if (!parent || !result.url.startsWith('file:') || result.url.includes('?')) return result;
  const at = parent.indexOf('?generation=');
  if (at === -1 || result.url.includes('/node_modules/') || (core && result.url.startsWith(core))) return result;
  return { ...result, url: `${result.url}${parent.slice(at)}` };
}
