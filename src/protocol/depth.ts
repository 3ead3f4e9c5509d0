/**
 * Client JSON nested deeper than any real request needs is refused up front: forwarding it would
 * overflow the stack in JSON.stringify (a 500) and it can only be a mistake or an attack.
 */
import { formatPath, type PathSegment } from '../config/issues.ts';

/** Deepest nesting accepted anywhere in a request body (objects and arrays count one level each). */
export const MAX_JSON_DEPTH = 64;

/** The path of the first value nested deeper than `max`, or undefined when the body is within it. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string | undefined {
  const path: PathSegment[] = [];
  return walk(value, 0, max, path) ? formatPath(path) || '(body)' : undefined;
}

/** Recursion is bounded by `max`, so the check itself cannot overflow. */
function walk(value: unknown, depth: number, max: number, path: PathSegment[]): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= max) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      if (walk(value[i], depth + 1, max, path)) return true;
      path.pop();
    }
    return false;
  }
  for (const key in value) {
    path.push(key);
    if (walk((value as Record<string, unknown>)[key], depth + 1, max, path)) return true;
    path.pop();
  }
  return false;
}
