/** A gateway.yaml with `keys` client keys (block style, as an operator writes it), for reload tests and the bench. */
import { DEV_KEY } from 'switchyard-gateway/kit/testing';

export interface BigConfigOptions {
  /** One more key, to see a reload apply. */
  extraKey?: string;
  /** Gives keys[n] an unknown team, to see a reload rejected with its position. */
  brokenKeyAt?: number;
}

export function bigConfig(keys: number, options: BigConfigOptions = {}): string {
  const lines = [
    'providers:',
    '  m: { plugin: mock, reply: hi }',
    'models:',
    '  demo: { targets: [{ provider: m, model: x, price: { input: 1, output: 1 } }] }',
    'teams:',
    '  research: { budget: { usd: 1000, period: daily } }',
    '  support: {}',
    'keys:',
    '  - name: dev',
    `    key: ${DEV_KEY}`,
  ];
  for (let i = 1; i < keys; i++) {
    lines.push(
      `  - name: key-${i}`,
      `    key: sk-test-${String(i).padStart(8, '0')}-a1b2c3d4e5f6g7h8`,
      `    team: ${options.brokenKeyAt === i ? 'nobody' : i % 2 ? 'research' : 'support'}`,
      '    models: ["*"]',
    );
  }
  if (options.extraKey) lines.push('  - name: added', `    key: ${options.extraKey}`);
  return `${lines.join('\n')}\n`;
}
