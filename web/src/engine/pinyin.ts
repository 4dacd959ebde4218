/**
 * Pinyin in the engine: constraints on a blank by sound and the readings shown with candidates.
 *
 * A blank may say how it sounds, in the text (`[MASK:shang4]`, `［MASK：shàng］`, `【MASK:平】`) or
 * per mask in `fill(text, { constraints })`. The core parses it (sound_constraint.cc) and resolves
 * it to the vocabulary tokens the blank admits; the decoder then renormalises that blank's
 * probabilities over them, the memory's proposals included. Both parsing and the pinyin table
 * live in the core: this file only names the blank in messages, keeps resolved constraints, and
 * reads readings.
 */
import type { CoreModule, EncodeResult, WasmTokenizer } from '../core/core-module.js';
import { TiankongError } from '../errors.js';
import type { CharReading, ToneClass } from '../types.js';
import { show } from './options.js';

/** A blank's constraint, resolved for the model's vocabulary. */
export interface BlankConstraint {
  /** As shown: "shàng", "shang" (any tone), "平", "仄". */
  display: string;
  /** allowed[id] = 1 for the tokens the blank may be. */
  allowed: Uint8Array;
}

/** Resolved constraints kept per engine (each holds one byte per vocabulary token). */
const MAX_RESOLVED = 64;
/** Readings kept per engine before the memo starts over. */
const MAX_READINGS = 20000;

/** The blank as messages name it: "blank 2 ([MASK:shangg])". */
function blankName(index: number, written: string): string {
  return `blank ${index + 1} (${written})`;
}

/**
 * The engine's sound constraints and readings: resolves constraints through the core (memoised),
 * and gives each candidate token its readings.
 */
export class Pinyin {
  private readonly resolved = new Map<string, ReturnType<CoreModule['soundConstraint']>>();
  private readonly readings = new Map<string, string[]>();

  constructor(
    private readonly module: CoreModule,
    private readonly tokenizer: WasmTokenizer,
  ) {}

  /**
   * The constraint of every mask of an encoded text: typed in the text, or given in `given`
   * (fill's `constraints`, already checked to be strings or null/undefined), null where a mask has
   * none. Throws BAD_INPUT naming the blank for a typed constraint that cannot be met, BAD_OPTION
   * for a given one (or when `given` has more entries than the text has masks, or constrains a
   * blank the text already constrains).
   */
  forMasks(
    text: string,
    encoding: Pick<EncodeResult, 'maskConstraints' | 'offsets' | 'maskPositions'>,
    given: readonly (string | null | undefined)[] | undefined,
  ): (BlankConstraint | null)[] {
    const typed = encoding.maskConstraints;
    if (given && given.length > typed.length) {
      throw new TiankongError(
        'BAD_OPTION',
        `tiankong: constraints has ${given.length} entries but the text has ${typed.length} [MASK]; ` +
          'give one entry per mask (null for a mask without a constraint)',
      );
    }
    return typed.map((inText, index) => {
      const option = given?.[index];
      if (inText && option != null) {
        throw new TiankongError(
          'BAD_OPTION',
          `tiankong: constraints[${index}] is ${show(option)} but ${blankName(index, this.written(text, encoding, index))} ` +
            'already has a constraint in the text; give it in one place',
        );
      }
      if (inText) return this.resolve(inText.text, 'BAD_INPUT', blankName(index, this.written(text, encoding, index)));
      if (option != null) return this.resolve(option, 'BAD_OPTION', `constraints[${index}] (blank ${index + 1})`);
      return null;
    });
  }

  /**
   * The readings of a one-character token, likeliest first ("xíng", "háng"), those meeting
   * `constraint` first (the core orders them); for a token of several characters one reading,
   * each character's first joined by spaces; [] when no character has one.
   */
  readingsOf(token: string, constraint: BlankConstraint | null = null): string[] {
    const key = constraint ? `${token}\u0000${constraint.display}` : token;
    let readings = this.readings.get(key);
    if (readings === undefined) {
      const chars = this.module.readingsOf(token, true, constraint?.display);
      readings =
        chars.length === 0
          ? []
          : chars.length === 1 && [...token].length === 1
            ? chars[0]!.readings
            : [chars.map((c) => c.readings[0]!).join(' ')];
      if (this.readings.size >= MAX_READINGS) this.readings.clear();
      this.readings.set(key, readings);
    }
    return readings;
  }

  /** Each character's first reading (meeting its blank's constraint), "" for one without. */
  wordReadings(tokens: readonly string[], constraints: readonly (BlankConstraint | null)[]): string[] {
    return tokens.map((token, k) => this.readingsOf(token, constraints[k] ?? null)[0] ?? '');
  }

  /** The mask as the user wrote it ("[MASK:shang4]"). */
  private written(text: string, encoding: Pick<EncodeResult, 'offsets' | 'maskPositions'>, index: number): string {
    const position = encoding.maskPositions[index]!;
    return text.slice(encoding.offsets[2 * position]!, encoding.offsets[2 * position + 1]!);
  }

  private resolve(constraint: string, code: 'BAD_INPUT' | 'BAD_OPTION', where: string): BlankConstraint {
    let result = this.resolved.get(constraint);
    if (result === undefined) {
      result = this.module.soundConstraint(this.tokenizer, constraint);
      if (this.resolved.size >= MAX_RESOLVED) this.resolved.delete(this.resolved.keys().next().value!);
      this.resolved.set(constraint, result);
    }
    if (result.error !== undefined) throw new TiankongError(code, `tiankong: ${where}: ${result.error}`);
    if (result.count === 0) {
      throw new TiankongError(
        code,
        `tiankong: ${where}: no character of this model's vocabulary reads ${result.display}; ` +
          'check the syllable and the tone (1-4, 5 for the neutral tone)',
      );
    }
    return { display: result.display, allowed: result.allowed };
  }
}

/**
 * A candidate's readings with its reading in the idiom it completes first (落 in 丢三落四:
 * ["là", "luò", ...]); `readings` itself when `inIdiom` is "" or already first.
 *
 *   inIdiomFirst(['luò', 'là', 'lào'], 'là') // ['là', 'luò', 'lào']
 */
export function inIdiomFirst(readings: string[], inIdiom: string): string[] {
  if (!inIdiom || readings[0] === inIdiom) return readings;
  return [inIdiom, ...readings.filter((r) => r !== inIdiom)];
}

/** Names a text's constraints in cache fingerprints ('' when it has none). */
export function constraintsKey(constraints: readonly (BlankConstraint | null)[]): string {
  return constraints.some((c) => c !== null) ? `|sound:${constraints.map((c) => c?.display ?? '').join(',')}` : '';
}

/** The decoder's `allowed` rows for these constraints (undefined when none is constrained). */
export function allowedRows(constraints: readonly (BlankConstraint | null)[]): (Uint8Array | null)[] | undefined {
  return constraints.some((c) => c !== null) ? constraints.map((c) => c?.allowed ?? null) : undefined;
}

/** The core's tone classes (readingsOf `classes`, pinyin::ClassOf) by name. */
const TONE_CLASSES: readonly ToneClass[] = ['轻声', '平', '仄'];

/**
 * Each character of `text` that has a reading, with its readings and tone class (see
 * CharReading): standard readings only where the character has one, so that a classical
 * dictionary's rare reading (不 fǒu) neither shows nor makes a character a polyphone.
 */
export function charReadings(module: CoreModule, text: string): CharReading[] {
  return module.readingsOf(text, true, undefined).map((entry) => {
    const standard = entry.readings.map((_, r) => entry.standard[r] === 1);
    const kept = standard.some(Boolean) ? standard : standard.map(() => true);
    const pinyin = entry.readings.filter((_, r) => kept[r]);
    const classes = [...entry.classes].filter((_, r) => kept[r]).map((c) => TONE_CLASSES[c]!);
    return {
      char: text.slice(entry.start, entry.end),
      start: entry.start,
      end: entry.end,
      pinyin,
      tone: classes.find((c) => c !== '轻声') ?? '轻声',
      polyphone: classes.includes('平') && classes.includes('仄'),
    };
  });
}
