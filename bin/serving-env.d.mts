/** Types of serving-env.mjs, for the TypeScript that imports it (the benchmark). */
export declare const SERVE_FLAGS: readonly string[];
export declare function servingEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
