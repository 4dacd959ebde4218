// The lean graph (scripts/export-model --lean, model/tiankong_model/lean_graph.py) through the
// built package: the shipped default model with its model.onnx and head.bin replaced by exports of
// model/default/checkpoint (the shipped form: fp16-stored weights, the shipped head.bin type), once
// as the torch graph and once as the lean graph, loads with the checks the runtime applies to any
// model (graph shapes against the architecture, head.bin, memory, window) and fills the same
// candidates with the same scores, corpus memory fused, on onnxruntime-node and on
// onnxruntime-web's wasm backend. (Both are re-exported: the shipped model.onnx was exported from
// the fp32 training checkpoint, model/default/checkpoint holds its weights rounded to bfloat16.)
// The graph-level checks (every kind, both block architectures, both runtimes, held-out
// agreement) are model/tests/test_lean_graph.py.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel } from '../../web/src/index.js';
import { api, missingPrerequisite, repoRoot } from './fixtures.js';

const SHIPPED = join(repoRoot, 'model', 'default');
const CHECKPOINT = join(SHIPPED, 'checkpoint');
const missing =
  missingPrerequisite() ?? (existsSync(join(CHECKPOINT, 'config.json')) ? null : 'model/default/checkpoint missing');
if (missing) console.warn(missing);

const TEXTS = [
  '春眠不觉晓，处处闻[MASK]鸟。',
  '今天天气很[MASK]，我们去公园吧。',
  '他每天早上[MASK][MASK]跑步。',
  '[MASK]天',
  '这个问题我们明天再讨论，今天先[MASK]到这里。',
];

/** The shipped model directory (memory, window, fusion) with `exported`'s graph and head.bin. */
function shippedWith(exported: string, dir: string): void {
  cpSync(SHIPPED, dir, { recursive: true, filter: (path) => !path.includes('checkpoint') });
  const manifest = JSON.parse(readFileSync(join(SHIPPED, 'model.json'), 'utf8'));
  for (const file of ['model.onnx', 'head.bin']) {
    copyFileSync(join(exported, file), join(dir, file));
    const bytes = readFileSync(join(dir, file));
    manifest.files[file] = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
  }
  writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest, null, 2) + '\n');
}

describe.skipIf(missing !== null)('the lean graph in the runtime', () => {
  let work: string;
  const dirs = { plain: '', lean: '' };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-lean-'));
    const { head } = JSON.parse(readFileSync(join(SHIPPED, 'model.json'), 'utf8'));
    for (const form of ['plain', 'lean'] as const) {
      const exported = join(work, `export-${form}`);
      const lean = form === 'lean' ? ['--lean'] : [];
      execFileSync(
        join(repoRoot, 'scripts', 'export-model'),
        ['--graph', 'core', '--fp16-weights', '--head-dtype', head.dtype, ...lean, CHECKPOINT, exported],
        { stdio: 'pipe' },
      );
      dirs[form] = join(work, form);
      shippedWith(exported, dirs[form]);
    }
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const backend of ['auto', 'wasm'] as const) {
    test(`fills as the torch graph does (${backend === 'auto' ? 'onnxruntime-node' : 'wasm'})`, async () => {
      const { createFillMask } = await api();
      let lean: FillMaskModel | undefined;
      let plain: FillMaskModel | undefined;
      try {
        lean = await createFillMask({ model: dirs.lean, backend, threads: 1 });
        plain = await createFillMask({ model: dirs.plain, backend, threads: 1 });
        for (const text of TEXTS) {
          const [a, b] = [await lean.fill(text, { topK: 5 }), await plain.fill(text, { topK: 5 })];
          expect(a.masks.length).toBe(b.masks.length);
          a.masks.forEach((mask, m) => {
            const reference = b.masks[m]!.candidates;
            expect(mask.candidates.map((c) => c.token)).toEqual(reference.map((c) => c.token));
            // The same weights and arithmetic up to kernel order: fp32 rounding.
            mask.candidates.forEach((c, k) => expect(Math.abs(c.score - reference[k]!.score)).toBeLessThan(2e-4));
          });
        }
      } finally {
        await lean?.dispose();
        await plain?.dispose();
      }
    });
  }
});
