// What scripts/evaluate-model and scripts/tune-fusion share: a model directory opened with the
// product's own pieces (the C++ core built to wasm: tokenizer, memory, decoder with fusion) and
// onnxruntime-node for the logits, plus the held-out cases both read.
//
//   const ev = await openEvaluator('model/default');
//   const rows = await ev.logits(cases);            // one Float32Array per case (its single [MASK])
//   ev.topModel(rows[i], cases[i], 5); ev.topFused(...); ev.topMemory(...)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './data-paths.mjs';

const HAN = /\p{Script=Han}/u;

/** fusion block of model.json -> the core's DecodeOptions.fusion. */
export function coreFusion(fusion) {
  return {
    model: fusion.model ?? 1,
    unigram: fusion.unigram ?? 0,
    ngram: Float32Array.from(fusion.ngram),
    hitBase: fusion.hit_base,
    hitPerToken: fusion.hit_per_token,
    hitWhole: fusion.hit_whole,
    minHitStrength: fusion.min_hit_strength,
    modelCandidates: fusion.model_candidates,
    floor: fusion.floor ?? 0,
  };
}

/**
 * Opens `modelDir` for evaluation. Options: `threads` (onnxruntime-node intra-op threads),
 * `memory` (false: no corpus memory), `memoryDir` (take memory.bin and its fusion weights from this
 * model directory instead of `modelDir`'s own: two exports of one checkpoint compared fused under
 * the same memory; the vocabularies must be the same), `dist` (the built runtime to load the C++
 * core from, default the repository's dist/).
 */
export async function openEvaluator(modelDir, { threads = 2, memory = true, memoryDir = modelDir, dist } = {}) {
  const loaderPath = join(dist ?? join(REPO_ROOT, 'dist'), 'core/load-core.js');
  if (!existsSync(loaderPath)) throw new Error(`${loaderPath} missing: run scripts/build`);
  const { loadCore } = await import(pathToFileURL(loaderPath).href);
  const core = await loadCore({ variant: 'single' });
  const module = core.module;
  const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
  const t = manifest.tokenizer;
  const tokenizer = new module.Tokenizer(new Uint8Array(readFileSync(join(modelDir, t.vocab))), {
    cleanText: t.clean_text,
    handleChineseChars: t.handle_chinese_chars,
    stripAccents: t.strip_accents,
    lowercase: t.lowercase,
    maxInputCharsPerWord: 100,
    maxLength: manifest.max_length,
  });
  const vocabSize = tokenizer.vocabSize();
  const vocab = Array.from({ length: vocabSize }, (_, id) => tokenizer.idToToken(id));
  const eligibleIds = Int32Array.from(
    vocab.flatMap((tok, id) =>
      tok.startsWith('##') || /^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(tok) ? [] : [id],
    ),
  );
  const memoryManifest =
    memoryDir === modelDir ? manifest : JSON.parse(readFileSync(join(memoryDir, 'model.json'), 'utf8'));
  let mem = null;
  if (memory && memoryManifest.memory && existsSync(join(memoryDir, memoryManifest.memory.file))) {
    const read = (file) => new Uint8Array(readFileSync(join(memoryDir, file)));
    const { file, ngrams } = memoryManifest.memory; // a split memory: both parts (the whole memory)
    mem = ngrams ? new module.Memory(read(file), tokenizer, read(ngrams)) : new module.Memory(read(file), tokenizer);
  }
  // A "core" model: the core's output layer gathers input embeddings and projects hidden states.
  const head =
    manifest.logits === 'core'
      ? new module.OutputLayer(new Uint8Array(readFileSync(join(modelDir, manifest.head.file))), vocabSize)
      : null;
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(join(modelDir, 'model.onnx'))), {
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  });
  const decoders = new Map();
  const decoder = (topK, fusion) => {
    const key = `${topK}|${fusion ? JSON.stringify(fusion) : '-'}`;
    if (!decoders.has(key)) {
      decoders.set(
        key,
        new module.Decoder(tokenizer, {
          topK,
          threshold: 0,
          excludeSpecial: true,
          excludeSubwords: true,
          ...(fusion ? { memory: mem, fusion: coreFusion(fusion) } : {}),
        }),
      );
    }
    return decoders.get(key);
  };

  /** Tokenizes a case's text (one [MASK]); null when it does not have exactly one. */
  function encode(text) {
    const e = tokenizer.encode(text);
    return e.maskPositions.length === 1 && e.truncatedTokens === 0 ? e : null;
  }

  return {
    manifest,
    vocab,
    vocabSize,
    tokenizer,
    memory: mem,
    eligibleIds,
    encode,
    fusion: memoryManifest.memory?.fusion ?? null,
    /** Logits at the mask of each encoded case (batches of `batch`, padded). */
    async logits(encodings, batch = 32) {
      const out = [];
      const pad = tokenizer.specialIds().pad;
      for (let i = 0; i < encodings.length; i += batch) {
        const group = encodings.slice(i, i + batch);
        const width = Math.max(...group.map((e) => e.ids.length));
        const ids = new BigInt64Array(group.length * width).fill(BigInt(pad));
        const mask = new BigInt64Array(group.length * width);
        const positions = new BigInt64Array(group.length);
        group.forEach((e, b) => {
          e.ids.forEach((id, k) => {
            ids[b * width + k] = BigInt(id);
            mask[b * width + k] = 1n;
          });
          positions[b] = BigInt(e.maskPositions[0]);
        });
        const feeds = {};
        for (const name of session.inputNames) {
          if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', ids, [group.length, width]);
          else if (name === 'inputs_embeds') {
            const embeds = head.embed(Int32Array.from(ids, Number));
            feeds[name] = new ort.Tensor('float32', embeds, [group.length, width, head.hiddenSize()]);
          } else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', mask, [group.length, width]);
          else if (name === 'token_type_ids')
            feeds[name] = new ort.Tensor('int64', new BigInt64Array(ids.length), [group.length, width]);
          else feeds[name] = new ort.Tensor('int64', positions, [group.length, 1]);
        }
        const outputs = await session.run(feeds);
        const logits = head ? head.logits(outputs.hidden.data, group.length) : outputs.logits.data;
        for (let b = 0; b < group.length; b++) out.push(logits.slice(b * vocabSize, (b + 1) * vocabSize));
      }
      return out;
    },
    /** Top-k ids of the model alone. */
    topModel(row, encoding, k = 5) {
      return Array.from(decoder(k, null).decode(row, 1, vocabSize, undefined, undefined)[0].ids);
    },
    /** Top-k ids of the model fused with the memory (weights: `fusion` or model.json's). */
    topFused(row, encoding, k = 5, fusion = this.fusion) {
      return Array.from(this.decodeFused(row, encoding, k, fusion).ids);
    },
    /** The fused decoder's top-k as the product shows it: { ids, probabilities, other }. */
    decodeFused(row, encoding, k = 5, fusion = this.fusion) {
      const [decoded] = decoder(k, fusion).decode(row, 1, vocabSize, encoding.ids, encoding.maskPositions);
      return decoded;
    },
    /**
     * Top-k ids of the memory alone: its n-gram model (stupid backoff over every token) plus passage
     * hits with fixed weights (MEMORY_ALONE_HITS), never the tuned fusion's, so that this baseline
     * stays the same whatever scripts/tune-fusion chooses.
     */
    topMemory(encoding, k = 5) {
      const hits = MEMORY_ALONE_HITS;
      const ev = mem.evidence(encoding.ids, encoding.maskPositions, 0, eligibleIds, hits.min_hit_strength);
      const scores = new Float64Array(eligibleIds.length);
      for (let i = 0; i < eligibleIds.length; i++) {
        let s = ev.unigram[i];
        for (let n = 2; n < 9; n++) s += ev.gains[9 * i + n];
        if (ev.hitText[i] >= 0)
          s += hits.hit_base + hits.hit_per_token * ev.hitStrength[i] + (ev.hitWhole[i] ? hits.hit_whole : 0);
        scores[i] = s;
      }
      const order = Array.from(scores.keys()).sort((a, b) => scores[b] - scores[a] || eligibleIds[a] - eligibleIds[b]);
      return order.slice(0, k).map((i) => eligibleIds[i]);
    },
    /** The candidates the fused decoder scores and the memory's evidence for each (for tuning). */
    evidence(row, encoding, modelCandidates, minHitStrength) {
      const top = Array.from(decoder(modelCandidates, null).decode(row, 1, vocabSize, undefined, undefined)[0].ids);
      const proposed = Array.from(mem.propose(encoding.ids, encoding.maskPositions, 0));
      const eligible = new Set(eligibleIds);
      const candidates = Int32Array.from(new Set([...top, ...proposed.filter((id) => eligible.has(id))]));
      return { candidates, ...mem.evidence(encoding.ids, encoding.maskPositions, 0, candidates, minHitStrength) };
    },
    dispose() {
      for (const d of decoders.values()) d.delete();
      mem?.delete();
      head?.delete();
      tokenizer.delete();
      core.dispose();
    },
  };
}

/**
 * Passage-hit weights of the memory-alone baseline: the untuned defaults scripts/build-memory writes
 * (a hit of strength s adds 2 + s, a whole idiom or clause 2 more). Until 2026-12-01 the baseline
 * took the tuned fusion's weights, so the same memory.bin scored 65-87% on idiom cloze depending
 * on the tuning.
 */
export const MEMORY_ALONE_HITS = Object.freeze({ hit_base: 2, hit_per_token: 1, hit_whole: 2, min_hit_strength: 3 });

/** Masks one Han character of `text` (chosen by `random`, or at `position`); null if it has none. */
export function maskOneChar(text, random, position) {
  const chars = [...text];
  const han = chars.flatMap((c, i) => (HAN.test(c) ? [i] : []));
  if (!han.length) return null;
  const at = position ?? han[Math.floor(random() * han.length)];
  const answer = chars[at];
  chars[at] = '[MASK]';
  return { text: chars.join(''), answer };
}

/** Whether a line or sentence of a split file is usable as a case: 6 to 120 characters. */
export function usableCaseText(text) {
  const length = [...text].length;
  return length >= 6 && length <= 120;
}

/** The sentences of `text`, each ending after 。！？； (the last may end without one), untrimmed. */
export function sentencesOf(text) {
  return String(text).match(/[^。！？；]+[。！？；]?/gu) ?? [];
}

/** Lines of a split file (.cache/corpus/<split>/<source>.txt) usable as cases. */
export function splitLines(path, limit) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(usableCaseText)
    .slice(0, limit);
}

/** Sentences of famous.jsonl texts (split after 。！？；), each with its text's index. */
export function famousSentences(path) {
  const out = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .forEach((line, textIndex) => {
      const { text } = JSON.parse(line);
      for (const sentence of sentencesOf(text)) {
        const s = sentence.trim();
        if ([...s].length >= 5 && [...s].length <= 60) out.push({ sentence: s, textIndex });
      }
    });
  return out;
}
