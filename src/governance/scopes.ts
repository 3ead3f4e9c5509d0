/**
 * The scopes of a request, named from gateway.yaml once so that every instance and every
 * reload counts under the same names. A target scope is the provider account and its model
 * (`target:openai/gpt-4o`), not the alias: a provider's quota is shared by every alias that
 * routes to it.
 */
import type { Budget, Scope } from './types.ts';

export interface RateLimits {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
}

export const keyScopeName = (key: string): string => `key:${key}`;
export const teamScopeName = (team: string): string => `team:${team}`;
export const targetScopeName = (provider: string, model: string): string => `target:${provider}/${model}`;

/** A scope when something is limited; undefined when nothing is (no need to count it). */
export function scopeOf(name: string, limits?: RateLimits, budget?: Budget): Scope | undefined {
  const { rpm, tpm, concurrency } = limits ?? {};
  if (rpm === undefined && tpm === undefined && concurrency === undefined && !budget) return undefined;
  return { name, limits: { rpm, tpm, concurrency, budget } };
}

/** The key's and team's scopes (checked on every attempt) and the target's (checked per target). */
export function requestScopes(parts: {
  key: { name: string; limits?: RateLimits; budget?: Budget };
  team?: { name: string; limits?: RateLimits; budget?: Budget };
  target?: { provider: string; model: string; limits?: RateLimits };
}): Scope[] {
  const { key, team, target } = parts;
  return [
    scopeOf(keyScopeName(key.name), key.limits, key.budget),
    team && scopeOf(teamScopeName(team.name), team.limits, team.budget),
    target && scopeOf(targetScopeName(target.provider, target.model), target.limits),
  ].filter((s): s is Scope => s !== undefined);
}
