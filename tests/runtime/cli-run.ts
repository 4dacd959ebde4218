// Runs the CLI (node bin/tiankong.js) as a user does, for the CLI suites (tests/runtime/cli.test.ts,
// tests/reliability/cli-edges.test.ts). Children are spawned asynchronously so the test process
// keeps serving the test runner while they run (a blocking spawnSync on a loaded machine starved
// its RPC).
import { spawn } from 'node:child_process';
import { cliPath } from './fixtures.js';

export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

export interface RunOptions {
  /** A file descriptor to give the child as stdin instead of a pipe carrying `input`. */
  stdin?: number;
  /** A file descriptor to give the child as stdout instead of a pipe (then `stdout` is ''). */
  stdout?: number;
}

/** Runs `command args` with `input` on stdin; resolves when it exits (killed after 120 s). */
export function run(command: string, args: string[], input?: string | Buffer, options: RunOptions = {}): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [options.stdin ?? 'pipe', options.stdout ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined); // the CLI may exit before reading all of stdin
      child.stdin.end(input ?? '');
    }
  });
}

/** Runs the CLI with `input` on stdin (see run). */
export function cli(args: string[], input?: string | Buffer, options: RunOptions = {}): Promise<Run> {
  return run(process.execPath, [cliPath, ...args], input, options);
}

/**
 * Runs the CLI like `tiankong … | head -1`: reads the first line of stdout, then closes the pipe
 * while the CLI still has lines to write. Resolves with that line and how the CLI ended.
 */
export function cliHead(args: string[], input: string): Promise<Run & { first: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let buffered = '';
    let first: string | null = null;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (first !== null) return;
      buffered += chunk;
      const newline = buffered.indexOf('\n');
      if (newline >= 0) {
        first = buffered.slice(0, newline);
        child.stdout.destroy(); // the reader goes away, as head does
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout: first ?? '', stderr, seconds: 0, first: first ?? '' });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
