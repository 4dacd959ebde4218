// scripts/bench-explain: explain() and joint-decoding latency through the built package, and the
// batched-vs-isolated occlusion measurement (run straight on ONNX Runtime). See scripts/bench-explain.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT as root } from '../model/tooling/data-paths.mjs';
import { readVocab, referenceTokenizer } from '../model/tooling/hf-reference-tokenizer.mjs';
import { logSoftmax } from '../model/tooling/logits.mjs';
import { createSession, runLogits } from '../model/tooling/ort-session.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '8' },
    threads: { type: 'string', default: '2' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'explain.json') },
  },
});
const runs = Number(values.runs);
const threads = Number(values.threads);

function defaultModels() {
  if (existsSync(join(root, 'model', 'default', 'model.onnx'))) return [join(root, 'model', 'default')];
  const cache = join(root, '.cache', 'test-model');
  const tiny = existsSync(cache)
    ? readdirSync(cache)
        .map((d) => join(cache, d, 'mask-only'))
        .filter((d) => existsSync(join(d, 'model.onnx')))
    : [];
  if (tiny.length === 0) {
    console.error(
      'no model: pass MODEL_DIR, ship model/default, or run the runtime tests once (they generate the tiny model)',
    );
    process.exit(2);
  }
  return [tiny[0]];
}
const models = positionals.length > 0 ? positionals : defaultModels();

const PARAGRAPH =
  '春天来了，公园里的花都开了，孩子们在草地上放风筝，老人们坐在长椅上聊天。' +
  '我们明天早上八点在学校门口集合，然后一起坐车去博物馆参观古代的文物和书画。' +
  '这本书讲的是一个年轻人离开家乡去大城市工作，经历了很多困难以后终于找到了自己的方向。' +
  '天气预报说今天下午有大雨，出门的时候记得带上雨伞，路上开车也要注意安全。';
const chars = [...PARAGRAPH];

/** A `length`-character window of the paragraph (variant `v` shifts it) with `masks` adjacent masks in the middle. */
function sentence(length, v, masks) {
  const start = (v * 7) % (chars.length - length);
  const window = chars.slice(start, start + length);
  const at = Math.floor((length - masks) / 2);
  window.splice(at, masks, ...Array(masks).fill('[MASK]'));
  return window.join('');
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const summary = (xs) => ({ medianMs: +quantile(xs, 0.5).toFixed(1), p95Ms: +quantile(xs, 0.95).toFixed(1) });

const { createFillMask } = await import(join(root, 'dist', 'index.js'));
const latency = [];
console.log('model\tbackend\tthreads\tchars\tcall\truns/call\tmedian ms\tp95 ms');
for (const model of models) {
  for (const backend of ['wasm', 'auto']) {
    const tk = await createFillMask({ model, backend, threads, cache: { maxEntries: 0, maxBytes: 0 } });
    const stats = tk.stats();
    await tk.explain(sentence(16, 99, 1), 0, '的'); // warm-up
    for (const length of [16, 32]) {
      const calls = {
        explain: async (v) => {
          const text = sentence(length, v, 1);
          const top = (await tk.fill(text, { topK: 1 })).masks[0].candidates[0].token;
          const before = tk.stats().runs;
          const started = performance.now();
          await tk.explain(text, 0, top);
          return { ms: performance.now() - started, modelRuns: tk.stats().runs - before };
        },
        'joint 2 masks, beam 5': (v) => joint(tk, sentence(length, v, 2), 5),
        'joint 4 masks, beam 5': (v) => joint(tk, sentence(length, v, 4), 5),
        'joint 4 masks, beam 1': (v) => joint(tk, sentence(length, v, 4), 1),
      };
      for (const [call, measure] of Object.entries(calls)) {
        const times = [];
        let modelRuns = 0;
        for (let v = 0; v < runs; v++) {
          const measured = await measure(v);
          times.push(measured.ms);
          modelRuns = measured.modelRuns;
        }
        const row = {
          model: stats.model.name,
          backend: stats.backend,
          threads: stats.threads,
          chars: length,
          call,
          modelRuns,
          ...summary(times),
        };
        latency.push(row);
        console.log(Object.values(row).join('\t'));
      }
    }
    await tk.dispose();
  }
}

async function joint(tk, text, beam) {
  const before = tk.stats().runs;
  const started = performance.now();
  await tk.fill(text, { joint: true, beam, filter: 'chinese' });
  return { ms: performance.now() - started, modelRuns: tk.stats().runs - before };
}

// Batched vs isolated occlusion, straight on ONNX Runtime: the same variants (each content
// token replaced by [MASK]) run one per session.run, then all in one batch; the batch shares one
// DynamicQuantizeLinear scale per activation tensor, so its scores drift from the isolated ones.
const batching = [];
console.log('\nbatched vs isolated occlusion (score = drop in log P of the isolated top-1)');
console.log('model\truntime\tchars\tvariants\tisolated ms\tbatched ms\tmax |Δscore|\tmedian |score|\ttop-3 same');
for (const model of models) {
  const manifest = JSON.parse(readFileSync(join(model, 'model.json'), 'utf8'));
  const vocab = readVocab(join(model, manifest.tokenizer.vocab));
  const tokenizer = referenceTokenizer(vocab, { lowercase: manifest.tokenizer.lowercase });
  const maskId = manifest.special_tokens.mask;
  for (const kind of ['node', 'web']) {
    const session = await createSession(join(model, 'model.onnx'), kind, threads);
    for (const length of [16, 32]) {
      let isolatedMs = 0,
        batchedMs = 0,
        maxDelta = 0,
        sameTop = 0,
        variantsPerText = 0;
      const magnitudes = [];
      for (let v = 0; v < runs; v++) {
        const ids = (await tokenizer.encode(sentence(length, v, 1))).getIds();
        const target = ids.indexOf(maskId);
        const variants = [
          ids,
          ...ids.flatMap((id, i) =>
            i === 0 || i === ids.length - 1 || id === maskId ? [] : [ids.map((x, j) => (j === i ? maskId : x))],
          ),
        ];
        variantsPerText = variants.length - 1;
        const feeds = (rows) => ({
          input_ids: rows,
          attention_mask: rows.map((r) => r.map(() => 1)),
          token_type_ids: rows.map((r) => r.map(() => 0)),
          mask_positions: rows.map(() => [target]),
        });
        let started = performance.now();
        const isolated = [];
        for (const row of variants)
          isolated.push(logSoftmax((await runLogits(session, feeds([row]))).data.subarray(0, vocab.length)));
        isolatedMs += performance.now() - started;
        started = performance.now();
        const { data } = await runLogits(session, feeds(variants));
        batchedMs += performance.now() - started;
        const batched = variants.map((_, r) => logSoftmax(data.subarray(r * vocab.length, (r + 1) * vocab.length)));
        const candidate = isolated[0].indexOf(Math.max(...isolated[0]));
        const scoresOf = (rows) => rows.slice(1).map((row) => rows[0][candidate] - row[candidate]);
        const a = scoresOf(isolated);
        const b = scoresOf(batched);
        a.forEach((s, i) => {
          maxDelta = Math.max(maxDelta, Math.abs(s - b[i]));
          magnitudes.push(Math.abs(s));
        });
        const top3 = (s) =>
          s
            .map((x, i) => [x, i])
            .sort((x, y) => y[0] - x[0])
            .slice(0, 3)
            .map(([, i]) => i)
            .join();
        if (top3(a) === top3(b)) sameTop++;
      }
      const row = {
        model: manifest.name,
        runtime: kind === 'node' ? 'onnxruntime-node' : 'onnxruntime-web',
        chars: length,
        variants: variantsPerText,
        isolatedMs: +(isolatedMs / runs).toFixed(1),
        batchedMs: +(batchedMs / runs).toFixed(1),
        maxScoreDelta: +maxDelta.toPrecision(3),
        medianAbsScore: +quantile(magnitudes, 0.5).toPrecision(3),
        top3Same: `${sameTop}/${runs}`,
      };
      batching.push(row);
      console.log(Object.values(row).join('\t'));
    }
  }
}

mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(
  values.out,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, runs, threads, latency, batching }, null, 2) +
    '\n',
);
console.log(`wrote ${values.out}`);
process.exit(0);
