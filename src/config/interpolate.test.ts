/** `${VAR}` / `${VAR:-default}` resolved on the YAML document, with positions for unset variables. */
import { describe, expect, it } from 'vitest';
import { describeUnset, interpolate } from './interpolate.ts';
import { ConfigSource } from './source.ts';

/** Interpolates `yaml` (lines joined with \n) under `env`; returns the resulting values and the unset list. */
function run(yaml: string | string[], env: NodeJS.ProcessEnv) {
  const source = new ConfigSource('gateway.yaml', Array.isArray(yaml) ? yaml.join('\n') : yaml);
  expect(source.issues).toEqual([]);
  const unset = interpolate(source, env);
  return { value: source.doc.toJS() as Record<string, unknown>, unset };
}

describe('interpolate', () => {
  it('replaces ${VAR} with the environment value', () => {
    const { value, unset } = run('apiKey: ${OPENAI_API_KEY}', { OPENAI_API_KEY: 'sk-123' });
    expect(value).toEqual({ apiKey: 'sk-123' });
    expect(unset).toEqual([]);
  });

  it('replaces every reference inside a longer string', () => {
    const { value } = run('url: "https://${HOST}:${PORT}/v1"', { HOST: 'example.com', PORT: '8443' });
    expect(value.url).toBe('https://example.com:8443/v1');
  });

  it('${VAR:-default} uses the default when the variable is unset or empty, the value when set', () => {
    expect(run('region: ${AWS_REGION:-us-east-1}', {}).value.region).toBe('us-east-1');
    expect(run('region: ${AWS_REGION:-us-east-1}', { AWS_REGION: '' }).value.region).toBe('us-east-1');
    expect(run('region: ${AWS_REGION:-us-east-1}', { AWS_REGION: 'eu-west-3' }).value.region).toBe('eu-west-3');
  });

  it('a default may be empty, or contain colons and slashes', () => {
    expect(run('x: "${OPT:-}"', {}).value.x).toBe('');
    expect(run('x: ${BASE:-http://localhost:11434/v1}', {}).value.x).toBe('http://localhost:11434/v1');
  });

  it('an empty variable without a default counts as unset', () => {
    const { unset } = run('apiKey: ${KEY}', { KEY: '' });
    expect(unset.map((u) => u.name)).toEqual(['KEY']);
  });

  it('reports each unset variable with its path, line and column; the value keeps the reference text', () => {
    const yaml = ['server:', '  port: 8080', 'providers:', '  openai:', '    apiKey: ${OPENAI_API_KEY}', '  azure:', '    apiKey: "x-${AZURE_KEY}"'];
    const { value, unset } = run(yaml, {});
    expect(unset).toEqual([
      { name: 'OPENAI_API_KEY', path: ['providers', 'openai', 'apiKey'], line: 5, col: 13 },
      { name: 'AZURE_KEY', path: ['providers', 'azure', 'apiKey'], line: 7, col: 13 },
    ]);
    expect(value.providers).toEqual({ openai: { apiKey: '${OPENAI_API_KEY}' }, azure: { apiKey: 'x-${AZURE_KEY}' } });
  });

  it('a scalar with one unset reference is left entirely as written, even its set references', () => {
    const { value, unset } = run('url: "${HOST}:${MISSING}"', { HOST: 'h' });
    expect(value.url).toBe('${HOST}:${MISSING}');
    expect(unset.map((u) => u.name)).toEqual(['MISSING']);
  });

  it('reports each unset reference, also two in one scalar, and items of sequences with their index', () => {
    const { unset } = run(['keys:', '  - ${A}', '  - fixed', '  - "${B}/${C}"'], {});
    expect(unset).toEqual([
      { name: 'A', path: ['keys', 0], line: 2, col: 5 },
      { name: 'B', path: ['keys', 2], line: 4, col: 5 },
      { name: 'C', path: ['keys', 2], line: 4, col: 5 },
    ]);
  });

  it('$${VAR} is a literal ${VAR}, not a reference', () => {
    const { value, unset } = run('template: "$${USER} is ${USER}"', { USER: 'ada' });
    expect(value.template).toBe('${USER} is ada');
    expect(unset).toEqual([]);
    expect(run('template: $${NOT_SET}', {}).unset).toEqual([]);
  });

  it('a value is inserted once, not expanded again', () => {
    expect(run('x: ${A}', { A: '${B}', B: 'no' }).value.x).toBe('${B}');
  });

  it('a plain scalar that is only a reference takes the type of its value', () => {
    const { value } = run(['port: ${PORT:-8080}', 'ratio: ${RATIO}', 'debug: ${DEBUG}', 'name: ${NAME}', 'nothing: ${NOTHING}'], { RATIO: '0.5', DEBUG: 'true', NAME: 'gw', NOTHING: 'null' });
    expect(value).toEqual({ port: 8080, ratio: 0.5, debug: true, name: 'gw', nothing: 'null' });
  });

  it('quoted scalars and references inside text stay strings', () => {
    const { value } = run(['quoted: "${PORT}"', "single: '${PORT}'", 'mixed: ${PORT}0'], { PORT: '8080' });
    expect(value).toEqual({ quoted: '8080', single: '8080', mixed: '80800' });
  });

  it('keys, numbers, booleans and text without references are left alone', () => {
    const { value, unset } = run(['${KEY}: 1', 'n: 5', 'b: false', 'text: "$HOME and {braces}"', 'lone: "${"'], { KEY: 'k', HOME: '/h' });
    expect(value).toEqual({ '${KEY}': 1, n: 5, b: false, text: '$HOME and {braces}', lone: '${' });
    expect(unset).toEqual([]);
  });

  it('a name must start with a letter or underscore: ${1X} is not a reference', () => {
    const { value, unset } = run('x: "${1X}"', { '1X': 'no' });
    expect(value.x).toBe('${1X}');
    expect(unset).toEqual([]);
  });

  it('rewrites the document in place: the source reads the new values', () => {
    const source = new ConfigSource('gateway.yaml', 'a:\n  b: ${V}');
    interpolate(source, { V: 'new' });
    expect(source.doc.getIn(['a', 'b'])).toBe('new');
  });
});

describe('describeUnset', () => {
  it('names the variable and where it is used', () => {
    expect(describeUnset({ name: 'OPENAI_API_KEY', path: ['providers', 'openai', 'apiKey'], line: 5, col: 13 })).toBe('environment variable OPENAI_API_KEY is not set (at providers.openai.apiKey)');
    expect(describeUnset({ name: 'A', path: ['keys', 0], line: 2, col: 5 })).toBe('environment variable A is not set (at keys[0])');
  });
});
