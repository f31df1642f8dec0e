"""nystrom_bench.pdftable draws a table as fpdf2's own FPDF.table() does: the same page content, operator for
operator (uncompressed streams compared), on tables with wrapping cells, fills, per-cell alignment, page breaks
with repeated headings; and its line breaks are fpdf2's."""

import random
import re

import pytest

fpdf = pytest.importorskip("fpdf")

from fpdf.enums import MethodReturnValue  # noqa: E402
from fpdf.fonts import FontFace  # noqa: E402

from nystrom_bench.pdftable import _wrap, draw_table  # noqa: E402

WORDS = ("a bb ccc nystrom uniform ridge_leverage 0.123 +- 0.004 [1.2, 3.4] win loss tie kmeans-pp x7.4 "
         "(lower is better) -16% vs").split()


def _doc():
    pdf = fpdf.FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_compression(False)
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    return pdf


def _fpdf2_table(pdf, rows, col_widths, align, lh, fills, aligns):
    with pdf.table(col_widths=col_widths, text_align=align, line_height=lh, first_row_as_headings=True) as t:
        for i, r in enumerate(rows):
            row = t.row()
            for j, v in enumerate(r):
                f = fills[i][j] if fills else None
                row.cell(v, align=aligns[i][j] if aligns else None, style=FontFace(fill_color=f) if f else None)


def _ours(pdf, rows, col_widths, align, lh, fills, aligns):
    draw_table(pdf, rows, col_widths=col_widths, line_height=lh, text_align=align, fills=fills, aligns=aligns)


def _text(rng):
    t = " ".join(rng.choice(WORDS) for _ in range(rng.choice([0, 1, 1, 2, 3, 8, 20])))
    r = rng.random()
    if r < 0.04:
        t = " " + t  # a leading space: may make an empty first line
    elif r < 0.08:
        t = t + "\n" + t  # a line break: fpdf2's own line breaker
    elif r < 0.1:
        t = "averyveryveryverylongwordwithoutanyspaces" * 2  # broken inside the word
    return t


def _streams(pdf):
    return re.findall(rb"stream\n(.*?)endstream", bytes(pdf.output()), re.S)


def _draw(fn, spec):
    pdf = _doc()
    pdf.set_font("Helvetica", "", 9)
    pdf.set_y(pdf.y + spec["before"])
    pdf.set_font("Helvetica", "", spec["size"])
    try:
        fn(pdf, spec["rows"], spec["col_widths"], spec["align"], spec["lh"], spec["fills"], spec["aligns"])
    except Exception as e:  # noqa: BLE001 - fpdf2's own errors (a row higher than a page, a column too narrow)
        return type(e).__name__
    pdf.set_font("Helvetica", "", 9)
    pdf.multi_cell(100, 4, "after the table")
    return _streams(pdf)


def _spec(rng):
    ncol = rng.choice([2, 3, 5, 8, 15])
    nrow = rng.choice([1, 2, 4, 30, 90])
    fill = (rng.random() < 0.5)
    return {
        "rows": [[_text(rng) for _ in range(ncol)] for _ in range(nrow)],
        "size": rng.choice([6, 6.5, 7, 8]),
        "col_widths": None if rng.random() < 0.4 else tuple(rng.choice([12, 20, 34, 50]) for _ in range(ncol)),
        "align": rng.choice(["LEFT", "CENTER"]),
        "lh": rng.choice([4.0, 4.2]),
        "fills": [[rng.choice([None, None, (190, 232, 196), (245, 196, 196)]) for _ in range(ncol)]
                  for _ in range(nrow)] if fill else None,
        "aligns": [[("LEFT" if j == 0 else None) for j in range(ncol)] for _ in range(nrow)] if rng.random() < 0.5
        else None,
        "before": rng.choice([0, 120, 240]),  # tables that start low on the page run onto the next
    }


@pytest.mark.parametrize("seed", range(6))
def test_the_page_content_is_fpdf2_tables(seed):
    rng = random.Random(seed)
    for _ in range(4):
        spec = _spec(rng)
        theirs, ours = _draw(_fpdf2_table, spec), _draw(_ours, spec)
        if isinstance(theirs, str):
            assert ours == theirs  # the same error
            continue
        assert len(ours) == len(theirs)  # the same pages
        assert ours == theirs


def test_a_long_table_repeats_its_headings_on_every_page():
    rows = [["method", "value"]] + [[f"m{i}", f"{i / 7:.3f}"] for i in range(150)]
    spec = {"rows": rows, "size": 7, "col_widths": None, "align": "LEFT", "lh": 4.2, "fills": None,
            "aligns": None, "before": 200}
    ours = _draw(_ours, spec)
    assert ours == _draw(_fpdf2_table, spec)
    assert len(ours) >= 3 and all(b"(method) Tj" in page for page in ours[1:])


def test_line_breaks_are_fpdf2s():
    rng = random.Random(7)
    pdf = _doc()
    checked = 0
    for _ in range(1500):
        pdf.set_font("Helvetica", rng.choice(["", "B"]), rng.choice([6, 6.5, 7, 9.5]))
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25)))
        if rng.random() < 0.2:  # line breaks of its own (report.table breaks a long name after its "_" or "/")
            text = "\n".join(text.split(" ", 2)) if rng.random() < 0.5 else text.replace("_", "_\n")
        w = rng.uniform(8, 90)
        lines = _wrap(pdf, text, w)
        try:
            theirs = pdf.multi_cell(w=w, h=4, text=text, dry_run=True, output=MethodReturnValue.LINES, padding=0,
                                    align="LEFT")
        except fpdf.errors.FPDFException:
            assert lines is None
            continue
        if lines is not None:
            assert lines == theirs, (text, w)
            checked += 1
    assert checked > 1000  # nearly every text decided here, not left to fpdf2


def test_what_it_cannot_decide_is_left_to_fpdf2():
    pdf = _doc()
    pdf.set_font("Helvetica", "", 7)
    assert _wrap(pdf, "two\n\nlines", 50) is None  # an empty line
    assert _wrap(pdf, "soft\xadhyphen " * 5, 20) is None
    assert _wrap(pdf, "averyveryveryverylongwordwithoutanyspaces", 20) is None  # broken inside the word
    assert _wrap(pdf, "short", 50) == ["short"]
    assert _wrap(pdf, "two\nlines", 50) == ["two", "lines"]  # decided: each line on its own


def test_ragged_rows_and_wrong_widths_are_errors():
    pdf = _doc()
    pdf.set_font("Helvetica", "", 7)
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        draw_table(pdf, [["a", "b"], ["c"]])
    with pytest.raises(ValueError, match="col_widths gives 3 widths for 2 columns"):
        draw_table(pdf, [["a", "b"]], col_widths=(1, 2, 3))
