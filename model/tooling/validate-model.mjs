// Compares an exported (usually INT8) model with its fp32 reference on real sentences:
// corpus lines tokenized by HF's reference tokenizer (npm `tokenizers`) with the tested
// model's vocab, random Chinese characters replaced by [MASK]; the tested model runs in
// onnxruntime-node and onnxruntime-web (wasm), the reference in onnxruntime-node.
// A pruned model is compared in its own vocab: reference logits are looked up by token.
// The Node half of scripts/validate-model (model/tiankong_model/validate.py runs it).
// usage: node model/tooling/validate-model.mjs --model DIR --reference DIR --corpus DIR [--sentences N]
//          [--seed N] [--threads N] [--dump FILE --dump-count N]
// stdout: JSON metrics; --dump writes the first cases with the reference's fp32 logits
// (base64 float32) so the caller can compare them with PyTorch.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readVocab, referenceTokenizer } from './hf-reference-tokenizer.mjs';
import { argmax, klDivergence, logSoftmax, topK } from './logits.mjs';
import { createSession, runLogits } from './ort-session.mjs';
import { mulberry32 } from './prng.mjs';

const HAN = /^\p{Script=Han}$/u;
const MAX_MASKS = 3;

function parseArgs(argv) {
  const args = { sentences: 200, seed: 0, threads: 2, 'dump-count': 8 };
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const required of ['model', 'reference', 'corpus']) {
    if (!args[required]) throw new Error(`--${required} is required`);
  }
  return args;
}

/** Picks `count` lines of 8–64 characters, round-robin over the corpus files. */
function pickSentences(corpusDir, count, random) {
  const files = readdirSync(corpusDir)
    .filter((f) => f.endsWith('.txt'))
    .sort();
  if (!files.length) throw new Error(`${corpusDir}: no *.txt corpus files`);
  const pools = files.map((f) =>
    readFileSync(join(corpusDir, f), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => [...l].length >= 8 && [...l].length <= 64),
  );
  const sentences = [];
  for (let i = 0; sentences.length < count; i++) {
    const pool = pools[i % pools.length];
    if (pool.length) sentences.push(pool[Math.floor(random() * pool.length)]);
  }
  return sentences;
}

function loadModel(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
  const vocab = readVocab(join(dir, manifest.tokenizer.vocab));
  return { dir, manifest, vocab, index: new Map(vocab.map((t, i) => [t, i])) };
}

/** Logits [n_masks][vocab] at `positions`, for mask-only and full-logits graphs alike. */
async function maskedLogits(handle, manifest, ids, positions) {
  const feeds = {
    input_ids: [ids],
    attention_mask: [ids.map(() => 1)],
    token_type_ids: [ids.map(() => 0)],
    mask_positions: [positions],
  };
  const { dims, data } = await runLogits(handle, feeds);
  const vocabSize = dims[2];
  return positions.map((p, k) => {
    const row = manifest.logits === 'full' ? p : k;
    return data.subarray(row * vocabSize, (row + 1) * vocabSize);
  });
}

function summarize(pairs) {
  const n = pairs.length;
  const mean = (f) => pairs.reduce((s, p) => s + f(p), 0) / n;
  return {
    masks: n,
    top1_agreement: mean((p) => +(p.top1 === p.refTop1)),
    top1_in_reference_top5: mean((p) => +p.refTop5.includes(p.top1)),
    top5_overlap: mean((p) => p.top5.filter((t) => p.refTop5.includes(t)).length / 5),
    kl_mean: mean((p) => p.kl),
    kl_max: Math.max(...pairs.map((p) => p.kl)),
    max_abs_logit_diff: Math.max(...pairs.map((p) => p.maxDiff)),
    top1_is_original: mean((p) => +(p.top1 === p.label)),
    reference_top1_is_original: mean((p) => +(p.refTop1 === p.label)),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const tested = loadModel(args.model);
  const reference = loadModel(args.reference);
  // Reference logit index of each tested-vocab token (identity unless the tested vocab was pruned).
  const toReference = tested.vocab.map((t) => {
    if (!reference.index.has(t))
      throw new Error(`token ${JSON.stringify(t)} of ${args.model} is not in the reference vocab`);
    return reference.index.get(t);
  });
  const keptReferenceIds = new Set(toReference);
  const tokenizer = referenceTokenizer(tested.vocab, { lowercase: tested.manifest.tokenizer.lowercase });
  const random = mulberry32(Number(args.seed));
  const sentences = pickSentences(args.corpus, Number(args.sentences), random);
  const threads = Number(args.threads);
  const refHandle = await createSession(join(reference.dir, 'model.onnx'), 'node', threads);
  const runtimes = {
    node: await createSession(join(tested.dir, 'model.onnx'), 'node', threads),
    web: await createSession(join(tested.dir, 'model.onnx'), 'web', threads),
  };
  const pairs = { node: [], web: [] };
  const crossRuntime = [];
  const dump = [];
  let referenceTop1Pruned = 0;
  const maxLength = tested.manifest.max_length;
  for (const sentence of sentences) {
    const encoding = await tokenizer.encode(sentence);
    const ids = encoding.getIds().slice(0, maxLength);
    const tokens = encoding.getTokens().slice(0, maxLength);
    const candidates = tokens.map((t, i) => (HAN.test(t) && i < ids.length - 1 ? i : -1)).filter((i) => i > 0);
    if (!candidates.length) continue;
    const nMasks = Math.min(MAX_MASKS, Math.max(1, Math.round(candidates.length * 0.15)));
    const positions = [];
    while (positions.length < nMasks) {
      const p = candidates[Math.floor(random() * candidates.length)];
      if (!positions.includes(p)) positions.push(p);
    }
    positions.sort((a, b) => a - b);
    const labels = positions.map((p) => ids[p]);
    const masked = ids.map((id, i) => (positions.includes(i) ? tested.manifest.special_tokens.mask : id));
    const refIds = masked.map((id) => toReference[id]);
    const refRows = await maskedLogits(refHandle, reference.manifest, refIds, positions);
    const refInTested = refRows.map((row) => Float32Array.from(toReference, (r) => row[r]));
    referenceTop1Pruned += refRows.filter((row) => !keptReferenceIds.has(argmax(row))).length;
    if (dump.length < Number(args['dump-count'])) {
      dump.push({
        sentence,
        input_ids: refIds,
        mask_positions: positions,
        logits: refRows.map((row) => Buffer.from(new Float32Array(row).buffer).toString('base64')),
      });
    }
    const rowsByRuntime = {};
    for (const [kind, handle] of Object.entries(runtimes)) {
      const rows = await maskedLogits(handle, tested.manifest, masked, positions);
      rowsByRuntime[kind] = rows.map((r) => Float32Array.from(r));
      rows.forEach((row, k) => {
        const ref = refInTested[k];
        let maxDiff = 0;
        for (let i = 0; i < row.length; i++) maxDiff = Math.max(maxDiff, Math.abs(row[i] - ref[i]));
        pairs[kind].push({
          top1: argmax(row),
          top5: topK(row, 5),
          refTop1: argmax(ref),
          refTop5: topK(ref, 5),
          kl: klDivergence(logSoftmax(ref), logSoftmax(row)),
          maxDiff,
          label: labels[k],
        });
      });
    }
    rowsByRuntime.node.forEach((row, k) => {
      const web = rowsByRuntime.web[k];
      let maxDiff = 0;
      for (let i = 0; i < row.length; i++) maxDiff = Math.max(maxDiff, Math.abs(row[i] - web[i]));
      crossRuntime.push({ same: argmax(row) === argmax(web), maxDiff });
    });
  }
  if (args.dump) writeFileSync(args.dump, JSON.stringify(dump));
  const result = {
    sentences: sentences.length,
    seed: Number(args.seed),
    threads,
    tested: {
      dir: tested.dir,
      name: tested.manifest.name,
      quantization: tested.manifest.quantization,
      vocab_size: tested.vocab.length,
      bytes: tested.manifest.files['model.onnx'].bytes,
    },
    reference: {
      dir: reference.dir,
      name: reference.manifest.name,
      vocab_size: reference.vocab.length,
      bytes: reference.manifest.files['model.onnx'].bytes,
    },
    reference_top1_outside_tested_vocab: referenceTop1Pruned / pairs.node.length,
    vs_reference: { 'onnxruntime-node': summarize(pairs.node), 'onnxruntime-web': summarize(pairs.web) },
    node_vs_web: {
      top1_agreement: crossRuntime.filter((c) => c.same).length / crossRuntime.length,
      max_abs_logit_diff: Math.max(...crossRuntime.map((c) => c.maxDiff)),
    },
  };
  process.stdout.write(JSON.stringify(result), () => process.exit(0));
}

main().catch((err) => {
  console.error(`validate-model: ${err.message}`);
  process.exit(1);
});
