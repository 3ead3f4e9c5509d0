/** The image's runtime stage as the deployment tests read it: its command, paths and settings. */
import path from 'node:path';
import { ROOT } from '../helpers/repo.ts';
import { envOf, last, readDockerfile, type Stage } from './dockerfile.ts';

export const DOCKERFILE = path.join(ROOT, 'Dockerfile');

/** The last stage: what the image runs. */
export function runtimeStage(): Stage {
  const { stages } = readDockerfile(DOCKERFILE);
  const stage = stages.at(-1);
  if (!stage) throw new Error('the Dockerfile has no FROM');
  return stage;
}

/** ENTRYPOINT followed by CMD, both in exec form (a shell form would put /bin/sh between Docker's signals and Node). */
export function imageCommand(stage = runtimeStage()): string[] {
  const entrypoint = last(stage, 'ENTRYPOINT').exec;
  const cmd = last(stage, 'CMD').exec;
  if (!entrypoint || !cmd) throw new Error('ENTRYPOINT and CMD must be in exec form (JSON arrays)');
  return [...entrypoint, ...cmd];
}

/** The value of a `--name VALUE` option in a command. */
export function optionOf(command: string[], name: string): string | undefined {
  const i = command.indexOf(name);
  return i >= 0 ? command[i + 1] : undefined;
}

export { envOf };
