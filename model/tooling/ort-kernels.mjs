#!/usr/bin/env node
// Which kernels ONNX Runtime runs for a model, per run, after its session-start optimizations
// (constant folding, fusions): one profiled run of a model directory's model.onnx on dummy feeds,
// in onnxruntime-node or onnxruntime-web's wasm build. The evidence that a weight-storage form
// (fp16-weights, int8-weights) computes like fp32: the same kernels as the fp32 export, none of
// them reading an int8 or float16 tensor (a restore that was not folded would dequantize on
// every run).
//
//   node model/tooling/ort-kernels.mjs MODEL_DIR [--runtime node|web] [--option KEY=VALUE]...
//
// --option: a session config entry (ONNX Runtime's key, set through options.extra), e.g.
// session.disable_quant_qdq=1.
// Prints JSON: {"runtime", "kernels": {op type: count}, "lowPrecisionInputs": [kernel names]}
// (kernels with an int8, uint8 or float16 input).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createSession } from './ort-session.mjs';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { runtime: { type: 'string', default: 'node' }, option: { type: 'string', multiple: true, default: [] } },
});
if (positionals.length !== 1 || !['node', 'web'].includes(args.runtime)) {
  console.error('usage: ort-kernels.mjs MODEL_DIR [--runtime node|web] [--option KEY=VALUE]...');
  process.exit(2);
}
const dir = positionals[0];
if (process.env.TK_ORT_KERNELS_CHILD) {
  await profileRun();
} else {
  // The wasm build prints its profile on this process's stdout (Emscripten's tty, not
  // console.log): profile in a child process and read the profile from its output.
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    env: { ...process.env, TK_ORT_KERNELS_CHILD: '1' },
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (child.status !== 0) {
    process.stderr.write(child.stderr);
    process.exit(1);
  }
  const text = child.stdout;
  const events = JSON.parse(text.slice(text.indexOf('[\n{'), text.lastIndexOf(']') + 1));
  const kernels = {};
  const lowPrecisionInputs = [];
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    kernels[e.args.op_name] = (kernels[e.args.op_name] ?? 0) + 1;
    const types = (e.args.input_type_shape ?? []).flatMap((t) => Object.keys(t));
    if (types.some((t) => ['int8', 'uint8', 'float16'].includes(t))) lowPrecisionInputs.push(e.name.slice(0, -12));
  }
  console.log(JSON.stringify({ runtime: args.runtime, kernels, lowPrecisionInputs }));
}

/** One profiled run on dummy feeds; the profile goes to stdout (node: copied from its file). */
async function profileRun() {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
  // "a.b=v" -> extra {a: {b: "v"}}: ONNX Runtime joins the nesting back into its config key.
  const extra = {};
  for (const option of args.option) {
    const path = option.slice(0, option.indexOf('=')).split('.');
    let level = extra;
    for (const part of path.slice(0, -1)) level = level[part] ??= {};
    level[path.at(-1)] = option.slice(option.indexOf('=') + 1);
  }
  const work = mkdtempSync(join(tmpdir(), 'ort-kernels-'));
  const options = {
    enableProfiling: true,
    ...(args.runtime === 'node' ? { profileFilePrefix: join(work, 'profile') } : {}),
    ...(args.option.length ? { extra } : {}),
  };
  const handle = await createSession(join(dir, 'model.onnx'), args.runtime, 1, options);
  const { ort } = handle;
  const seq = 8;
  const feeds = {};
  for (const name of handle.session.inputNames) {
    if (name === 'inputs_embeds') {
      const hidden = manifest.architecture.hidden_size;
      feeds[name] = new ort.Tensor('float32', new Float32Array(seq * hidden).fill(0.01), [1, seq, hidden]);
    } else if (name === 'mask_positions') feeds[name] = new ort.Tensor('int64', BigInt64Array.of(1n), [1, 1]);
    else if (name === 'input_ids')
      feeds[name] = new ort.Tensor(
        'int64',
        BigInt64Array.from({ length: seq }, () => 5n),
        [1, seq],
      );
    else
      feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq).fill(name === 'attention_mask' ? 1n : 0n), [1, seq]);
  }
  await handle.session.run(feeds);
  handle.session.endProfiling();
  const text = args.runtime === 'node' ? readFileSync(join(work, readdirSync(work)[0]), 'utf8') : '';
  rmSync(work, { recursive: true, force: true });
  // Exit once stdout is flushed: onnxruntime-web's thread pool would keep the process alive.
  process.stdout.write(text, () => process.exit(0));
}
