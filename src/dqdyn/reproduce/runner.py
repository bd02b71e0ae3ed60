"""``reproduce``: run the cases, print the tables, write Markdown / CSV / PNG."""

from __future__ import annotations

import time
from pathlib import Path

from dqdyn.analysis import to_csv, to_markdown
from dqdyn.analysis.tables import COLUMNS, _fmt
from dqdyn.errors import DqdynError
from dqdyn.reproduce.cases import CASES as _PAPER_CASES
from dqdyn.reproduce.mladenova import MLADENOVA_CASES

#: every case by name ([Mladenova]'s constructions registered here: mladenova.py builds on cases.py)
CASES = {**_PAPER_CASES, **MLADENOVA_CASES}

EXTRA = ("parallel",)

#: cases left out of the default quick run (``dqdyn demo``): minutes of symbolic generation and
#: stiff simulation; run them by name (``dqdyn reproduce elastic``)
NOT_IN_DEMO = ("elastic",)


def available_cases() -> list[str]:
    return list(CASES) + list(EXTRA)


def _rows(results):
    rows = []
    for r in results:
        if r.paper is not None or r.extra.get("kind") == "cmc":
            s = r.stats
            rows.append({"case": r.title, "quantity": r.quantity, "n": len(r.values), **s,
                         "paper mean": r.paper, "ok": "yes" if r.passed else "NO"})
    return rows


def _route_rows(results):
    """The papers' row structure: per CMC case, its main route and the alternative routes."""
    rows = []
    for r in results:
        routes = r.extra.get("routes")
        if not routes:
            continue
        s = r.stats
        rows.append([r.title, r.extra.get("main_route", "dqdyn") + " (main)",
                     *(f"{s[k]:.4f}" if k != "std" else f"{s[k]:.1e}" for k in ("min", "mean", "std", "max"))])
        for name, vals in routes.items():
            if vals is None:
                rows.append([r.title, name, "N/A", "N/A", "N/A", "N/A"])
                continue
            import numpy as np

            v = np.asarray(vals, dtype=float)
            rows.append([r.title, name, f"{np.nanmin(v):.4f}", f"{np.nanmean(v):.4f}",
                         f"{np.nanstd(v):.1e}", f"{np.nanmax(v):.4f}"])
    return rows


def reproduce(cases=None, out_dir="reproduce-out", quick: bool = False, console=None):
    """Run ``cases`` (default: all), write ``results.md``, ``results.csv`` and figures under
    ``out_dir``; print rich tables to ``console``.  Returns the list of results (``CaseResult``
    for the dynamics / control cases; the dict of `dqdyn.reproduce.parallel_robots.reproduce_parallel`
    for ``parallel``)."""
    names = list(cases) if cases else [c for c in available_cases() if not (quick and c in NOT_IN_DEMO)]
    bad = [c for c in names if c not in available_cases()]
    if bad:
        raise DqdynError(f"cases: unknown case(s) {bad}; expected some of {available_cases()}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    results, others = [], []
    for name in names:
        if console is not None:
            console.print(f"[bold]{name}[/bold] …")
        if name == "parallel":
            from dqdyn.reproduce.parallel_robots import render, reproduce_parallel

            res = reproduce_parallel(quick=quick)
            render(res, console, out)
            others.append(res)
            continue
        fn, kind = CASES[name]
        r = fn(quick=quick, out_dir=out)
        r.extra["kind"] = kind
        results.append(r)
        if console is not None:
            console.print(f"  {r.notes}  ({r.seconds:.1f} s)  {'ok' if r.passed else 'FAILED'}")
    total = time.perf_counter() - t_all
    rows = _rows(results)
    control = [r for r in results if r.extra.get("kind") == "control"]
    tables = [r for r in results if r.extra.get("kind") == "table"]
    md = ["# dqdyn reproduce" + (" (quick)" if quick else ""), "",
          "CMC (Ferrari et al. 2010) between dqdyn and MuJoCo waveforms, per joint; the "
          "paper's mean is Silva2022 Table 2 / Silva2022thesis Tables 4.6, 5.1, A.1.", "", to_markdown(rows)]
    rrows = _route_rows(results)
    if rrows:
        md += ["## The papers' routes, computed by dqdyn", "",
               "Same MuJoCo log, same differentiation and filtering; rtNE = classic 3-vector "
               "Newton–Euler (N/A on mobile bases, as in the papers); dqGP = M_GP q̈ + C_GP q̇ + "
               "g_GP (Silva2022 eqs. (46)–(51)); dqNE (forward) = M, C q̇ + g from n + 2 dqNE calls.", "",
               "| case | route | min | mean | std | max |", "|---|---|---|---|---|---|"]
        md += ["| " + " | ".join(r) + " |" for r in rrows]
        md.append("")
        (out / "routes.csv").write_text(
            "case,route,min,mean,std,max\n" + "".join(",".join(f'"{c}"' for c in r) + "\n" for r in rrows),
            encoding="utf-8")
    cmc_notes = [r for r in results if r.extra.get("kind") == "cmc" and r.notes]
    if cmc_notes:
        md += ["## Notes", ""] + [f"- **{r.title}** ({r.seconds:.1f} s): {r.notes}" for r in cmc_notes]
        md.append("")
    if tables:
        md += ["## Tables", ""]
        for r in tables:
            md += [r.extra["markdown"], f"*{r.title}: {r.notes} — {'ok' if r.passed else 'FAILED'}*", ""]
    if control:
        md += ["## Control", "", "| case | result | ok | time (s) |", "|---|---|---|---|"]
        md += [f"| {r.title} | {r.notes} | {'yes' if r.passed else 'NO'} | {r.seconds:.1f} |"
               for r in control]
        md.append("")
    md += ["## Figures", ""] + [f"![{Path(f).stem}]({Path(f).name})" for r in results
                                for f in r.figures]
    md += ["", f"Total time: {total:.1f} s."]
    (out / "results.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "results.csv").write_text(to_csv(rows), encoding="utf-8")
    if console is not None:
        from rich.table import Table

        t = Table(title="CMC of dqdyn against MuJoCo (per-joint statistics)", title_justify="left")
        for c in COLUMNS:
            t.add_column(c, justify="right" if c not in ("case", "quantity") else "left")
        for r in rows:
            t.add_row(*[_fmt(r[c], c) for c in COLUMNS])
        console.print(t)
        for r in tables:
            console.print(r.extra["markdown"], markup=False)
        if rrows:
            t3 = Table(title="The papers' routes, computed by dqdyn (CMC against MuJoCo)",
                       title_justify="left")
            for c in ("case", "route", "min", "mean", "std", "max"):
                t3.add_column(c, justify="left" if c in ("case", "route") else "right")
            for r in rrows:
                t3.add_row(*r)
            console.print(t3)
        if control:
            t2 = Table(title="Control", title_justify="left")
            for c in ("case", "result", "ok"):
                t2.add_column(c)
            for r in control:
                t2.add_row(r.title, r.notes, "yes" if r.passed else "NO")
            console.print(t2)
        console.print(f"wrote {out / 'results.md'}, {out / 'results.csv'} and "
                      f"{sum(len(r.figures) for r in results)} figures; total {total:.1f} s")
    return results + others


def print_catalog(console=None) -> list[list[str]]:
    """``dqdyn reproduce --list``: every numeric table and figure of the five publications, with the
    case that regenerates it or why none can."""
    from dqdyn.reproduce.tables import catalog_rows

    rows = catalog_rows()
    if console is not None:
        from rich.table import Table

        t = Table(title="The publications' tables and figures, and what dqdyn regenerates for each",
                  title_justify="left")
        for c in ("publication", "table / figure", "content", "case", "note"):
            t.add_column(c, overflow="fold")
        for r in rows:
            t.add_row(*r)
        console.print(t)
        console.print(f"{sum(r[3] != '—' for r in rows)} of {len(rows)} regenerated; cases: "
                      + ", ".join(available_cases()))
    return rows


__all__ = ["reproduce", "available_cases", "print_catalog"]
