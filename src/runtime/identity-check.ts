/**
 * `switchyard validate --strict`: each provider's credentials resolved once (a token actually
 * fetched, through the provider's `checkIdentity`), reported as where they came from or why none
 * could be had. Never a secret: a source names a place, and failures pass the generation's redactor.
 */
import type { ProviderHandle } from './providers.ts';
import { describeFailure } from '../providers/credentials.ts';

export interface IdentityCheck {
  provider: string;
  ok: boolean;
  /** `azure:client-secret, valid for 59 min`, `api-key`, or why none worked. */
  said: string;
}

/** One check per provider, all at once; an unavailable provider fails with its reason. */
export function checkIdentities(providers: Iterable<ProviderHandle>, redact: (text: string) => string, now = Date.now): Promise<IdentityCheck[]> {
  return Promise.all(
    [...providers].map(async ({ name, instance, unavailable }): Promise<IdentityCheck> => {
      if (!instance) return { provider: name, ok: false, said: `unavailable: ${unavailable ?? 'not created'}` };
      try {
        const status = instance.checkIdentity ? await instance.checkIdentity() : instance.identity?.();
        if (!status) return { provider: name, ok: true, said: 'no identity to check (the plugin reports none)' };
        const left = status.expiresAt === undefined ? '' : `, valid for ${formatSeconds((status.expiresAt - now()) / 1000)}`;
        return { provider: name, ok: true, said: `${status.source}${left}` };
      } catch (err) {
        // The provider's own account of the failure, when it keeps one, says it best (no wrapping).
        const status = instance.identity?.();
        const why = status?.lastError ? `${status.source}: ${status.lastError}` : describeFailure(err);
        return { provider: name, ok: false, said: `no credentials: ${redact(why)}` };
      }
    }),
  );
}

function formatSeconds(s: number): string {
  if (s < 120) return `${Math.floor(s)} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h`;
}
