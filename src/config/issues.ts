/** A problem found in gateway.yaml, located precisely enough to jump to it in an editor. */
export interface ConfigIssue {
  severity: 'error' | 'warning';
  file: string;
  line: number;
  col: number;
  /** Dotted path into the document, e.g. `models.fast.targets[1].provider`; '' for the root. */
  path: string;
  message: string;
}

/** `gateway.yaml:14:9 models.fast.targets[1].provider: unknown provider "lcoal" (known: ...)` */
export function formatIssue(issue: ConfigIssue): string {
  const where = `${issue.file}:${issue.line}:${issue.col}`;
  const label = issue.severity === 'warning' ? 'warning: ' : '';
  return issue.path ? `${where} ${label}${issue.path}: ${issue.message}` : `${where} ${label}${issue.message}`;
}

export type PathSegment = string | number;

export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out ? `.${s}` : s;
  }
  return out;
}

export function byPosition(a: ConfigIssue, b: ConfigIssue): number {
  return a.line - b.line || a.col - b.col;
}

/** Thrown when a config cannot be used; carries every issue found, not just the first. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    const errors = issues.filter((i) => i.severity === 'error');
    issues = [...issues].sort(byPosition);
    super(`invalid configuration (${errors.length} error${errors.length === 1 ? '' : 's'}):\n${errors.map(formatIssue).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}
