/**
 * The Dockerfile as written (the image is never built here: no Docker engine): stages, base
 * image, user, volumes, health check and build context. What its command does when run is
 * test/deploy/image-entrypoint.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { ROOT } from '../helpers/repo.ts';
import { dockerignored, instructions, last, readDockerfile, readDockerignore, runCommands } from './dockerfile.ts';
import { DOCKERFILE, envOf, imageCommand } from './image.ts';

const { stages } = readDockerfile(DOCKERFILE);
const runtime = stages.at(-1)!;

describe('the Dockerfile', () => {
  it('builds in one stage and runs from another, both on Node 24 slim', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toMatch(/^node:24(\.[\d.]+)?(-[a-z]+)?-slim$/);
    const build = stages[0];
    expect(runCommands(build).map((c) => c.join(' '))).toContain('npm run build');
    // The runtime stage takes the built package from the build stage, not the sources from the context.
    const copies = instructions(runtime, 'COPY');
    expect(copies.some((c) => c.flags.from === build.name)).toBe(true);
    expect(copies.filter((c) => !c.flags.from).map((c) => c.text)).toEqual(['package.json package-lock.json ./']);
    expect(runCommands(runtime).find((c) => c[0] === 'npm' && c[1] === 'ci')).toEqual(expect.arrayContaining(['--omit=dev', '--ignore-scripts']));
  });

  it('runs as a numeric non-root user that owns only the state directory', () => {
    const user = last(runtime, 'USER').text;
    expect(user).toMatch(/^\d+:\d+$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    expect(instructions(runtime, 'RUN').some((r) => r.text.includes(`chown ${user} ${K8S_LAYOUT.stateDir}`))).toBe(true);
  });

  it('declares the config and state folders as volumes and the command reads the config from there', () => {
    const volumes = instructions(runtime, 'VOLUME').flatMap((v) => v.exec ?? v.text.split(/\s+/));
    expect(volumes).toEqual(expect.arrayContaining([K8S_LAYOUT.configDir, K8S_LAYOUT.stateDir]));
    const command = imageCommand();
    expect(command.slice(command.indexOf('--config'), command.indexOf('--config') + 2)).toEqual(['--config', `${K8S_LAYOUT.configDir}/${K8S_LAYOUT.configFile}`]);
    expect(last(runtime, 'ENTRYPOINT').exec?.[0], 'exec form, Node first: Node is PID 1').toBe('node');
  });

  it('checks health on /healthz with node (no curl in a slim image)', () => {
    const check = last(runtime, 'HEALTHCHECK');
    expect(check.exec?.[0]).toBe('node');
    expect(check.exec?.join(' ')).toContain('process.env.SWITCHYARD_HEALTHCHECK_URL');
    expect(new URL(envOf(runtime).SWITCHYARD_HEALTHCHECK_URL).pathname).toBe('/healthz');
    expect(check.flags.timeout).toBeDefined();
  });

  it('leaves dependencies, build output, tests and secrets out of the build context', () => {
    const ignore = readDockerignore(path.join(ROOT, '.dockerignore'));
    for (const p of [
      'node_modules',
      'node_modules/fastify/package.json',
      '.git',
      'dist/src/cli.js',
      'test/deploy/dockerfile.test.ts',
      'switchyard-gateway-0.1.0.tgz',
      'deploy/compose/secrets',
      'state.sqlite',
    ]) {
      expect(dockerignored(p, ignore), p).toBe(true);
    }
    for (const p of ['package.json', 'package-lock.json', 'src/cli.ts', 'plugins/mock/index.ts', 'schemas/gateway.schema.json', 'scripts/build.mjs', 'bin/switchyard.mjs', 'tsconfig.build.json']) {
      expect(dockerignored(p, ignore), p).toBe(false);
    }
  });
});
