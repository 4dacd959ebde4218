/**
 * What the page tells the user when something goes wrong: one specific Chinese message and
 * a suggestion per TiankongError code; the runtime's English detail stays folded under 技术细节.
 */

import type { TiankongErrorCode } from '../../src/errors.js';

/** Error codes of the runtime plus the app's own. */
export type AppErrorCode =
  | TiankongErrorCode
  /** The runtime package itself could not be loaded (tiankong/index.js). */
  | 'RUNTIME_LOAD';

export interface UserMessage {
  title: string;
  advice: string;
  /** Whether trying again can help (offers a retry button). */
  retry: boolean;
}

export const MESSAGES: Record<AppErrorCode, UserMessage> = {
  EMPTY_INPUT: { title: '请先输入一句话', advice: '在输入框里写一句中文，并用 [MASK] 标出要填的字。', retry: false },
  NO_MASK: {
    title: '句子里没有 [MASK]',
    advice: '在要填字的位置插入 [MASK]（可点“插入 [MASK]”按钮），例如：春眠不觉晓，处处闻啼[MASK]。',
    retry: false,
  },
  TOO_LONG: { title: '句子太长了', advice: '模型一次只能读有限长度的文字，请删短一些或分成几句再试。', retry: false },
  BAD_INPUT: {
    title: '读音要求无法满足',
    advice:
      '[MASK:…] 里写的读音有误：写拼音（如 [MASK:shang]、[MASK:shang4] 或 [MASK:shàng]，ü 可写作 v），或写 [MASK:平] / [MASK:仄]。',
    retry: false,
  },
  BAD_OPTION: { title: '选项无效', advice: '请检查“选项”里的设置后重试。', retry: false },
  BAD_MODEL: {
    title: '模型文件无法使用',
    advice: '模型文件缺失或已损坏。请刷新页面重新下载；若仍失败，请联系站点维护者。',
    retry: true,
  },
  INTEGRITY: {
    title: '模型文件校验失败',
    advice: '下载的模型与清单里的校验值不符（可能下载不完整或被篡改）。请点“重试”重新下载。',
    retry: true,
  },
  NETWORK: {
    title: '下载失败',
    advice: '无法下载模型。请检查网络连接后重试；首次访问成功后即可离线使用。',
    retry: true,
  },
  DISPOSED: { title: '模型已关闭', advice: '请刷新页面重新加载模型。', retry: true },
  UNSUPPORTED: {
    title: '此浏览器无法运行模型',
    advice: '需要支持 WebAssembly 与 Web Worker 的浏览器，请换用最新版的 Chrome、Edge、Firefox 或 Safari。',
    retry: false,
  },
  ABORTED: { title: '已取消', advice: '请求已被新的请求取代或取消。', retry: false },
  RUNTIME_LOAD: {
    title: '程序文件加载失败',
    advice: '页面所需的运行库没有加载成功。请检查网络后刷新页面。',
    retry: true,
  },
};

const KNOWN = new Set(Object.keys(MESSAGES));

/** The code of any thrown value: a TiankongError's code, else BAD_MODEL (an unclassified runtime failure). */
export function errorCode(error: unknown): AppErrorCode {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && KNOWN.has(code) ? (code as AppErrorCode) : 'BAD_MODEL';
}

/** The English detail of any thrown value. */
export function errorDetail(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The Chinese title and advice of any thrown value, and its technical (English) detail. */
export function describeError(error: unknown): UserMessage & { detail: string } {
  return { ...MESSAGES[errorCode(error)], detail: errorDetail(error) };
}

/** Why the engine runs on one thread, in Chinese (the runtime's reason is English). */
export function singleThreadReason(isolated: boolean, requested: boolean): string {
  if (!isolated) return '页面未启用跨源隔离，浏览器不允许多线程';
  return requested ? '按设置' : '此设备只有一个可用线程';
}
