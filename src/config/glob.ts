/** Model-name globs for key scopes: `*` matches any run of characters (slashes too), `?` one. */
export function compileGlob(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
