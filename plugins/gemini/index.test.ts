import { describe, expect, it } from 'vitest';
import { modelPath } from './index.ts';

describe('the model path', () => {
  it('models/ prefix optional, tuned models kept whole, odd characters escaped', () => {
    expect(modelPath('gemini-2.5-flash')).toBe('models/gemini-2.5-flash');
    expect(modelPath('models/gemini-2.5-flash')).toBe('models/gemini-2.5-flash');
    expect(modelPath('tunedModels/my-model-123')).toBe('tunedModels/my-model-123');
    expect(modelPath('a b')).toBe('models/a%20b');
  });
});
