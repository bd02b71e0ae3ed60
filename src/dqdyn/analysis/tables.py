"""Min / mean / std / max tables of per-joint metrics, as Markdown and CSV."""

from __future__ import annotations

import csv
import io

from dqdyn.analysis.cmc import summary

COLUMNS = ("case", "quantity", "n", "min", "mean", "std", "max", "paper mean", "ok")


def rows_from(results) -> list[dict]:
    """``results``: iterable of dicts with ``case``, ``quantity``, ``values`` (per-joint) and an
    optional ``paper`` (the paper's mean to reach)."""
    rows = []
    for r in results:
        s = summary(r["values"])
        paper = r.get("paper")
        ok = "" if paper is None else ("yes" if s["mean"] >= paper and s["min"] == s["min"] else "NO")
        rows.append({"case": r["case"], "quantity": r["quantity"], "n": len(r["values"]),
                     **s, "paper mean": paper, "ok": ok})
    return rows


def _fmt(v, column=None):
    """CMC statistics to their meaningful digits (`format_cmc`), the
    standard deviation in scientific notation."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if column == "std" or abs(v) < 1e-3:
            return f"{v:.1e}"
        from dqdyn.analysis.cmc import format_cmc

        return format_cmc(v)
    return str(v)


def to_markdown(rows, columns=COLUMNS) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        out.append("| " + " | ".join(_fmt(r.get(c), c) for c in columns) + " |")
    return "\n".join(out) + "\n"


def to_csv(rows, columns=COLUMNS) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    return buf.getvalue()


__all__ = ["rows_from", "to_markdown", "to_csv", "COLUMNS"]
