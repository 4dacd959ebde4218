// tiankong in a Vite app. The three lines that matter: import, createFillMask(), fill().
import { createFillMask, TiankongError } from 'tiankong';

const tk = await createFillMask(); // the packaged default model; the bundler emits every file it needs

const text = document.querySelector<HTMLInputElement>('#text')!;
const button = document.querySelector<HTMLButtonElement>('#fill')!;
const status = document.querySelector<HTMLElement>('#status')!;
const list = document.querySelector<HTMLOListElement>('#candidates')!;

async function fill(): Promise<void> {
  try {
    const result = await tk.fill(text.value, { topK: 5 });
    list.replaceChildren(
      ...result.masks[0]!.candidates.map((c) => {
        const item = document.createElement('li');
        item.textContent = `${c.token} ${(c.score * 100).toFixed(1)}%`;
        item.dataset.token = c.token;
        return item;
      }),
    );
    status.textContent = `${tk.stats().threads} thread(s), ${result.timings.totalMs.toFixed(1)} ms`;
  } catch (error) {
    status.textContent = error instanceof TiankongError ? `${error.code}: ${error.message}` : String(error);
  }
}

button.disabled = false;
button.addEventListener('click', () => void fill());
await fill();
