/**
 * Module resolution hooks for `module.registerHooks` (in-thread, synchronous), registered by
 * bin/switchyard.mjs before the gateway starts.
 *
 * - A module imported by a plugin that was loaded for config generation N is loaded for
 *   generation N too, so an edit to any file of a plugin takes effect on reload, not only an
 *   edit to its entry file. Packages (node_modules) and the gateway's own modules (`core`) stay
 *   shared, so class identities such as GatewayError hold.
 * - `conditions` are added to every resolution: in a repository checkout, "switchyard-source"
 *   makes the built-in plugins' `switchyard-gateway[/kit]` imports resolve to the TypeScript
 *   sources (package.json "exports") instead of the compiled dist/.
 *
 * @param {{ core: string, conditions?: string[] }} options `core`: URL of the gateway's own modules
 * @returns {import('node:module').RegisterHooksOptions}
 */
export function generationHooks({ core, conditions = [] }) {
  return {
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, conditions.length > 0 ? { ...context, conditions: [...(context.conditions ?? []), ...conditions] } : context);
      const parent = context.parentURL;
      if (!parent || !result.url.startsWith('file:') || result.url.includes('?')) return result;
      const at = parent.indexOf('?generation=');
      if (at === -1 || result.url.includes('/node_modules/') || result.url.startsWith(core)) return result;
      return { ...result, url: `${result.url}${parent.slice(at)}` };
    },
  };
}
