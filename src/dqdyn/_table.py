"""Tables and a console for the command line: rich when installed (extra ``cli``), plain text
otherwise, so ``dqdyn info`` / ``simulate`` / ``bench`` work on the core install."""

from __future__ import annotations

import shutil
import sys

from dqdyn._optional import available

HAVE_RICH = available("rich")


def escape(s: str) -> str:
    """Escape rich markup (``[...]``) when rich renders the text; identity otherwise."""
    if HAVE_RICH:
        from rich.markup import escape as _esc

        return _esc(s)
    return s


class PlainTable:
    """The subset of `rich.table.Table` the command line uses, rendered as text."""

    def __init__(self, title: str | None = None, **_):
        self.title = title
        self.columns: list[tuple[str, str]] = []
        self.rows: list[tuple[str, ...]] = []

    def add_column(self, header: str, justify: str = "left", **_):
        self.columns.append((header, justify))

    def add_row(self, *cells):
        self.rows.append(tuple(str(c) for c in cells))

    def render(self) -> str:
        heads = [h for h, _ in self.columns]
        w = [max([len(h)] + [len(r[k]) for r in self.rows]) for k, h in enumerate(heads)]

        def line(cells):
            out = []
            for k, c in enumerate(cells):
                out.append(c.rjust(w[k]) if self.columns[k][1] == "right" else c.ljust(w[k]))
            return "  ".join(out).rstrip()

        lines = [self.title] if self.title else []
        lines += [line(heads), "  ".join("-" * x for x in w)]
        lines += [line(r) for r in self.rows]
        return "\n".join(lines)


class PlainConsole:
    """``print`` with the signature of `rich.console.Console.print`."""

    def __init__(self, file=None):
        self.file = file if file is not None else sys.stdout

    def print(self, *objs, **_):
        for o in objs:
            print(o.render() if isinstance(o, PlainTable) else o, file=self.file)


def Table(title: str | None = None, **kw):  # noqa: N802 - a class-like factory
    if HAVE_RICH:
        from rich.table import Table as _T

        return _T(title=title, **kw)
    return PlainTable(title=title, **kw)


def console(file=None):
    """A rich console (plain without rich) that never cuts a table at the terminal width: the
    console is as wide as the terminal, or as the widest table it prints."""
    f = file if file is not None else sys.stdout
    if not HAVE_RICH:
        return PlainConsole(f)
    from rich.console import Console

    class _WideConsole(Console):
        def print(self, *objs, **kw):  # grow to the natural width of a table before printing
            from rich.table import Table as _T

            for o in objs:
                if isinstance(o, _T):
                    need = Console(width=100_000, file=f).measure(o).maximum
                    if need > self.width:
                        self.width = need
            return super().print(*objs, **kw)

    is_tty = hasattr(f, "isatty") and f.isatty()
    width = shutil.get_terminal_size((200, 24)).columns if is_tty else 200
    return _WideConsole(file=f, width=width, highlight=False, soft_wrap=False)
