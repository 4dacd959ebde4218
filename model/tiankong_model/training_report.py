"""The training report of the default model card: the validation-loss curve as an SVG plot, and a
summary of the training account (hardware, hours, tokens, epochs) from log.jsonl and
training_state.json.

    python -m tiankong_model.training_report LOG_JSONL STATE_JSON OUT_SVG [--json OUT_JSON]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def loss_curve_svg(points: list[tuple[float, float]], width: int = 640, height: int = 320, title: str = "") -> str:
    """A dependency-free line plot of (million tokens, validation loss) points, with axes and ticks."""
    if not points:
        raise ValueError("no validation points to plot")
    left, right, top, bottom = 56, 16, 28, 40
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = 0.0, max(xs) * 1.05 or 1.0
    y0, y1 = min(ys) - 0.1, max(ys) + 0.1
    sx = lambda x: left + (x - x0) / (x1 - x0) * (width - left - right)
    sy = lambda y: top + (y1 - y) / (y1 - y0) * (height - top - bottom)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">{title}</text>',
    ]
    for k in range(6):
        y = y0 + (y1 - y0) * k / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
    step = max(1, round(x1 / 6 / 5) * 5) if x1 > 10 else max(1, round(x1 / 6)) or 1
    x = 0.0
    while x <= x1:
        out.append(f'<line y1="{top}" y2="{height - bottom}" x1="{sx(x):.1f}" x2="{sx(x):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{height - bottom + 16}" text-anchor="middle">{x:g}</text>')
        x += step
    out.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">tokens seen (millions)</text>'
    )
    out.append(
        f'<text x="14" y="{(top + height - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + height - bottom) / 2})">validation loss (nats)</text>'
    )
    path = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(points))
    out.append(f'<path d="{path}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    for x, y in points:
        out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="#c0392b"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def summary(log: list[dict], state: dict) -> dict:
    """Hours, tokens, epochs and segments (machines) of a training run, and its validation curve."""
    evals = [e for e in log if "val_loss" in e]
    final = evals[-1] if evals else {}
    return {
        "tokens": state.get("tokens_seen"),
        "steps": state.get("step"),
        "epochs": state.get("epoch"),
        "hours": round(state.get("elapsed_s", 0) / 3600, 3),
        "recipe": state.get("recipe"),
        "segments": state.get("segments", []),
        "final_validation": {k: final.get(k) for k in ("val_loss", "val_top1", "val_top5")},
        "curve": [{"tokens": e["tokens"], "val_loss": e["val_loss"], "val_top1": e.get("val_top1")} for e in evals],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("state", type=Path)
    parser.add_argument("svg", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    log = read_log(args.log)
    state = json.loads(args.state.read_text())
    report = summary(log, state)
    points = [(p["tokens"] / 1e6, p["val_loss"]) for p in report["curve"]]
    args.svg.write_text(loss_curve_svg(points, title="tiankong-default: validation loss (held-out lines, 15% masked)"))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"training_report: {len(points)} validation points -> {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
