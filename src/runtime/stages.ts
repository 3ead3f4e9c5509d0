/** A generation's stage instances, created in `pipeline:` order; a create() that throws is a config error. */
import type { ConfigSource } from '../config/source.ts';
import type { StageRef } from '../config/types.ts';
import type { StageEnv, StageInstance, StagePlugin } from '../plugin-api.ts';

export async function createStages(pipeline: readonly StageRef[], plugins: readonly StagePlugin[], env: StageEnv, source: ConfigSource): Promise<StageInstance[]> {
  const stages: StageInstance[] = [];
  for (const [i, ref] of pipeline.entries()) {
    const plugin = plugins[i];
    const options = typeof ref === 'string' ? {} : (ref.options ?? {});
    try {
      const stage = await plugin.create(options, env);
      stages.push({ ...stage, name: stage.name || plugin.name });
    } catch (err) {
      source.error(['pipeline', i], `stage "${plugin.name}" failed to start: ${String((err as Error)?.message ?? err)}`);
    }
  }
  return stages;
}
