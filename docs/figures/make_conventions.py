"""Draws docs/figures/conventions.png (the layouts and frames of docs/conventions.md).

Run from the repository root: ``python docs/figures/make_conventions.py [--out PATH]`` (needs matplotlib).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

OUT = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else Path(__file__).with_name("conventions.png")


def boxes(ax, y, cells, colors, title):
    for k, (c, col) in enumerate(zip(cells, colors)):
        ax.add_patch(Rectangle((k, y), 1, 0.8, fc=col, ec="k", lw=0.8))
        ax.text(k + 0.5, y + 0.4, c, ha="center", va="center", fontsize=9)
        ax.text(k + 0.5, y + 0.95, str(k), ha="center", va="bottom", fontsize=7, color="0.4")
    ax.text(-0.2, y + 0.4, title, ha="right", va="center", fontsize=9)


def frame(ax, o, ex, ey, name, color):
    for d, lab in ((ex, "x"), (ey, "z")):
        ax.add_patch(FancyArrowPatch(o, (o[0] + d[0], o[1] + d[1]), arrowstyle="-|>",
                                     mutation_scale=12, color=color, lw=1.5))
        ax.text(o[0] + 1.12 * d[0], o[1] + 1.12 * d[1], lab, color=color, fontsize=8,
                ha="center", va="center")
    ax.text(o[0] - 0.15, o[1] - 0.25, name, color=color, fontsize=10, ha="right", va="top")


fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw=dict(width_ratios=[1.25, 1]))
P, D, W, V = "#cfe2f3", "#fce5cd", "#d9ead3", "#f4cccc"
boxes(a1, 3.0, ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"], [P] * 4 + [D] * 4,
      "vec8 (pose x)")
a1.text(2.0, 2.75, "P(x) = r  (rotation, [w x y z])", ha="center", fontsize=8)
a1.text(6.0, 2.75, "D(x) = ½ p r  (translation p)", ha="center", fontsize=8)
boxes(a1, 1.4, ["ωx", "ωy", "ωz", "vx", "vy", "vz"], [W] * 3 + [V] * 3, "twist vec6")
a1.text(1.5, 1.15, "ω: rad/s", ha="center", fontsize=8)
a1.text(4.5, 1.15, "v: m/s", ha="center", fontsize=8)
boxes(a1, -0.2, ["fx", "fy", "fz", "τx", "τy", "τz"], [V] * 3 + [W] * 3, "wrench vec6")
a1.text(1.5, -0.45, "f: N", ha="center", fontsize=8)
a1.text(4.5, -0.45, "τ: N·m", ha="center", fontsize=8)
a1.set_xlim(-2.6, 8.2)
a1.set_ylim(-0.8, 4.1)
a1.axis("off")
a1.set_title("layouts (last axis; leading axes are batch axes)", fontsize=10)

frame(a2, (0.3, 0.3), (1.0, 0.0), (0.0, 1.0), "F₀ (world)", "k")
frame(a2, (3.0, 1.6), (0.8, 0.45), (-0.45, 0.8), "Fᵢ (body i)", "C3")
a2.add_patch(FancyArrowPatch((0.3, 0.3), (3.0, 1.6), arrowstyle="-|>", mutation_scale=12,
                             color="C0", lw=1.2, ls="--"))
a2.text(1.9, 0.55, r"pose $x_i^0 = r + \varepsilon\, \frac{1}{2} p\, r$", color="C0", fontsize=9)
frame(a2, (3.0, 1.6), (1.0, 0.0), (0.0, 1.0), "", "0.6")
a2.text(4.35, 1.75, "world_aligned:\nat Fᵢ's origin,\nF₀'s axes", fontsize=7, color="0.35")
a2.text(3.5, 2.95, "body: Fᵢ's origin and axes", fontsize=7, color="C3")
a2.text(0.45, -0.35, "spatial: F₀'s origin and axes", fontsize=7, color="k")
a2.set_xlim(-0.8, 6.0)
a2.set_ylim(-0.6, 3.3)
a2.set_aspect("equal")
a2.axis("off")
a2.set_title("poses and the three Jacobian frames (rows [ω, v])", fontsize=10)
fig.tight_layout()
fig.savefig(OUT, dpi=130, bbox_inches="tight")
print("wrote", OUT)
