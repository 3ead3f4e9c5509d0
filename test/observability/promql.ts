/** Reading PromQL out of the rules file and the Grafana dashboard, and the metric names a query uses. */

/** Words PromQL uses that look like metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan', 'atan2']);

/**
 * The metric names a query selects: identifiers that are not functions, aggregations or
 * keywords, once strings, label matchers, ranges, grouping lists and Grafana variables are cut.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = bare[m.index - 1] ?? ' ';
    // The unit of a number or duration (1e-3, 5m) is not a name.
    if (/[0-9.]/.test(before)) continue;
    if (
      bare
        .slice(m.index + m[0].length)
        .trimStart()
        .startsWith('(')
    )
      continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

interface RulesFile {
  groups: Array<{ rules: Array<{ record?: string; alert?: string; expr: string }> }>;
}

/** The names the rules file records. */
export function recordingRules(rules: RulesFile): string[] {
  return rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : [])));
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every query of a dashboard's panels (rows' panels included), with its panel's title. */
export function dashboardQueries(dashboard: { panels?: Panel[] }): Array<{ panel: string; expr: string }> {
  const out: Array<{ panel: string; expr: string }> = [];
  const walk = (panels: Panel[] = []) => {
    for (const p of panels) {
      for (const target of p.targets ?? []) if (target.expr) out.push({ panel: p.title ?? '(untitled)', expr: target.expr });
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}
