// The admin API, with the admin key of this tab (sessionStorage: never localStorage, never a URL).
const KEY_STORE = 'switchyard.console.adminKey';

let adminKey = sessionStorage.getItem(KEY_STORE) ?? '';

export const savedKey = () => adminKey;

/** Use `key` from now on; `remember` keeps it for this tab once it was accepted. */
export function useKey(key, remember = false) {
  adminKey = key;
  if (remember) sessionStorage.setItem(KEY_STORE, key);
  else if (!key) sessionStorage.removeItem(KEY_STORE);
}

export class Refused extends Error {}

export async function api(path, init = {}) {
  const response = await fetch(path, { ...init, cache: 'no-store', headers: { ...init.headers, authorization: `Bearer ${adminKey}` } });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) throw new Refused(body?.error?.message ?? 'The admin key was refused.');
  if (!response.ok) throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
  return body;
}
