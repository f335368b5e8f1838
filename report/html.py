"""HTML building blocks for the report: escaped text, number formats, tables, embedded figures, the page.

Everything is inline: the CSS is in the page's ``<style>``, figures are ``data:image/png;base64``
URIs, links are in-page anchors only, and there is no script. Numeric table cells are
right-aligned and carry their unrounded value in ``data-value`` for readers that need it.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from sparkdl.numbers import finite

DASH = "\u2013"
FIGURE_DPI = 100


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def num(value: object, digits: int = 4) -> str:
    """A number to ``digits`` significant digits (integers whole); a dash for missing or infinite."""
    if isinstance(value, str):
        return value
    f = finite(value)
    if f is None:
        return DASH
    if f.is_integer() and abs(f) < 1e15:
        return f"{int(f):d}"
    return f"{f:.{digits}g}"


def pval(p: object) -> str:
    """A p-value: 3 significant digits, ``< 1e-300`` for underflow, a dash when undefined."""
    f = finite(p)
    if f is None:
        return DASH
    if f == 0.0:
        return "< 1e-300"
    return f"{f:.3g}"


def pct(value: object) -> str:
    f = finite(value)
    return DASH if f is None else f"{f:.2f}"


def level(value: object) -> str:
    """A factor level as written in a design: ``0.001``, ``4``, ``lenet``."""
    f = finite(value)
    if f is None:
        return str(value)
    return f"{int(f):d}" if f.is_integer() else f"{f:g}"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, whether it is a number, its raw value and optional inner HTML."""

    text: str
    numeric: bool = False
    value: float | None = None
    raw_html: str | None = None

    def render(self, tag: str = "td") -> str:
        cls = ' class="num"' if self.numeric else ""
        data = f' data-value="{self.value!r}"' if self.value is not None else ""
        inner = self.raw_html if self.raw_html is not None else esc(self.text)
        return f"<{tag}{cls}{data}>{inner}</{tag}>"


def ncell(value: object, fmt=num) -> Cell:
    """A numeric cell formatted with ``fmt``."""
    return Cell(fmt(value), True, finite(value))


def tcell(text: object) -> Cell:
    return Cell("" if text is None else str(text))


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, table_id: str | None = None,
          caption: str | None = None, numeric_headers: Sequence[bool] | None = None, cls: str = "data") -> str:
    """A ``<table>`` with a header row; numeric columns' headers are right-aligned too."""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    flags = list(numeric_headers) if numeric_headers is not None else [False] * len(headers)
    num_cls = ' class="num"'
    head = "".join(f'<th{num_cls if n else ""} scope="col">{esc(h)}</th>' for h, n in zip(headers, flags))
    body = "\n".join("<tr>" + "".join(c.render() for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table class="{cls}"{ident}>{cap}<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody></table></div>'


def keyvalue(pairs: Iterable[tuple[str, object]], table_id: str | None = None) -> str:
    """A two-column definition table."""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    rows = "".join(f"<tr><th scope=\"row\">{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pairs)
    return f'<table class="kv"{ident}><tbody>{rows}</tbody></table>'


def figure_uri(fig: Figure, dpi: int = FIGURE_DPI) -> tuple[str, int, int]:
    """The figure as a PNG data URI, with its width and height in pixels."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    w, h = fig.get_size_inches() * dpi
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), int(round(w)), int(round(h))


def figure(fig: Figure, alt: str, caption: str) -> str:
    uri, w, h = figure_uri(fig)
    return (f'<figure><img src="{uri}" width="{w}" height="{h}" alt="{esc(alt)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def image_file(path: Path, alt: str, caption: str, max_bytes: int = 4_000_000) -> str:
    """A PNG file embedded as a data URI (its own size; a notice if it is not a readable PNG)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return notice(f"{path.name} could not be read ({exc.strerror})")
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24 or len(data) > max_bytes:
        return notice(f"{path.name} is not a PNG image under {max_bytes // 1_000_000} MB; not shown")
    w, hgt = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return (f'<figure><img src="{uri}" width="{w}" height="{hgt}" alt="{esc(alt)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def figure_row(figs: list[str]) -> str:
    """Figures side by side (two per row), each scaled to its column."""
    return f'<div class="figs">{"".join(figs)}</div>' if figs else ""


def para(text: str, cls: str | None = None) -> str:
    c = f' class="{cls}"' if cls else ""
    return f"<p{c}>{esc(text)}</p>"


def bullets(items: Iterable[str], cls: str | None = None) -> str:
    c = f' class="{cls}"' if cls else ""
    return f"<ul{c}>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"


def notice(text: str) -> str:
    """A highlighted sentence for something missing or not possible."""
    return f'<p class="notice">{esc(text)}</p>'


def bar(percent: float | None) -> str:
    """A small inline bar for a share of variation (0-100)."""
    f = finite(percent)
    width = 0.0 if f is None else max(0.0, min(100.0, f))
    return f'<span class="bar"><span style="width:{width:.1f}%"></span></span>'


CSS = """
:root { --ink:#1d2430; --muted:#5b6472; --line:#d9dee5; --accent:#2b5d9b; --bad:#a1331f; --good:#2a7a3f;
        --zebra:#f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
       font: 15px/1.55 "DejaVu Sans", "Liberation Sans", Helvetica, Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; }
p { margin: 8px 0; max-width: 82ch; }
.subtitle { color: var(--muted); margin: 0 0 18px; }
nav { font-size: 14px; margin: 10px 0 6px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; white-space: nowrap; }
.scroll { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13.5px; }
table.data th, table.data td { padding: 4px 9px; border-bottom: 1px solid var(--line); text-align: left;
                               vertical-align: top; }
table.data thead th { background: #eef1f5; border-bottom: 2px solid #c5ccd6; white-space: nowrap; }
table.data tbody tr:nth-child(even) { background: var(--zebra); }
table.data caption { caption-side: top; text-align: left; color: var(--muted); padding: 2px 0 6px; }
table.data .num, .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv th { text-align: left; font-weight: 600; padding: 2px 16px 2px 0; vertical-align: top; white-space: nowrap; }
table.kv td { padding: 2px 0; font-family: "DejaVu Sans Mono", monospace; font-size: 13px; word-break: break-all; }
.findings li { margin: 6px 0; max-width: 88ch; }
.notice { background: #fff6e5; border-left: 4px solid #e0a526; padding: 8px 12px; }
.verdict-holds { color: var(--good); font-weight: 600; }
.verdict-violated { color: var(--bad); font-weight: 600; }
.verdict-not { color: var(--muted); }
pre { background: #f4f6f8; border: 1px solid var(--line); padding: 10px 12px; font-size: 12.5px;
      line-height: 1.4; overflow-x: auto; white-space: pre; }
figure { margin: 18px 0; }
.figs { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; align-items: start; }
.figs figure { margin: 8px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; max-width: 82ch; }
.bar { display: inline-block; width: 56px; height: 9px; background: #e6e9ee; margin-left: 8px;
       vertical-align: middle; }
.bar span { display: block; height: 100%; background: var(--accent); }
.small { font-size: 13px; color: var(--muted); }
"""


def page(title: str, subtitle: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """The whole document: ``sections`` are (anchor id, heading, body HTML)."""
    nav = " ".join(f'<a href="#{esc(i)}">{esc(h)}</a>' for i, h, _ in sections)
    body = "\n".join(f'<section id="{esc(i)}"><h2>{esc(h)}</h2>\n{b}\n</section>' for i, h, b in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n"
        f"<body><main><h1>{esc(title)}</h1><p class=\"subtitle\">{esc(subtitle)}</p>"
        f"<nav>{nav}</nav>\n{body}\n</main></body></html>\n"
    )
