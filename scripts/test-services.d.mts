/** Types of scripts/test-services.mjs (plain JavaScript, run before the bootstrap to Node 24), for its test. */
export interface Service {
  readonly name: string;
  /** Each program's finder: its path, or undefined when it is not there. */
  readonly programs: Readonly<Record<string, (env: NodeJS.ProcessEnv) => string | undefined>>;
  /** The package on each system (`brew`: a formula, or `--cask name`). */
  readonly install: { readonly debian: string; readonly fedora: string; readonly brew: string };
  /** Where a system installs it when that is not where the tests look, and the variable that says so. */
  readonly elsewhere?: { readonly variable: string; readonly fedora?: string; readonly brew?: string };
}
export interface Missing {
  readonly service: Service;
  readonly programs: string[];
}
export const SERVICES: readonly Service[];
export function missingServices(env: NodeJS.ProcessEnv, services?: readonly Service[]): Missing[];
export function decide(state: { missing: readonly Missing[]; wholeSuite: boolean; root: boolean; hasApt: boolean }): 'run' | 'install' | 'warn' | 'fail';
export function installMessage(missing: readonly Missing[]): string;
export function ensureServices(options: { wholeSuite: boolean }): void;
export function staleAgentClients(dir?: URL): string[];
export function ensureAgentClients(options: { wanted: boolean }): void;
