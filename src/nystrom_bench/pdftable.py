"""A table onto an fpdf2 page as fpdf2's own ``FPDF.table()`` draws it, with each cell's text broken into
lines once instead of twice.

fpdf2's ``table()`` (fpdf2 2.8, ``fpdf/table.py``) line-breaks every cell twice -- ``multi_cell`` in a dry
run for the row's height, then again to draw it -- and its line breaker (``MultiLineBreak``) measures the
line again for every character it adds: a study report of some 20,000 cells spent most of its PDF time
there.  :func:`draw_table` breaks each cell's text once (:func:`_wrap`: a text shorter than the room is one
line at once; a longer one is broken where fpdf2 breaks it, by the same integer width sums and the same
float comparison) and draws each line with ``cell()``, where ``multi_cell`` would put it.  What it does not
decide (a font other than a core font, a soft hyphen or no-break space in the text, a word wider than its
cell, an empty line) goes to ``multi_cell`` exactly as fpdf2's table sends it.  The geometry is
fpdf2's: column widths and x positions by the same floating-point operations, the row as high as its tallest
cell, text centred vertically, every border and fill drawn by fpdf2's own ``TableCellStyle``, the heading row
bold and repeated on top of every page the table runs onto, no heading left alone at the foot of a page.
The tests compare the page content streams with those of ``FPDF.table()`` on the same rows.

Only what the reports use is supported: one heading row, no row or column spans, images, links or markdown,
no padding or gutters, borders on every cell (``borders_layout="ALL"``), the table as wide as the page
between its margins.
"""

from __future__ import annotations

__all__ = ["draw_table", "column_widths", "TOLERANCE_MM"]

#: a text shorter than its cell's room by this much (mm) is one line without a character-by-character check
#: (fpdf2 compares the line so far plus the next character, rounded otherwise than the whole text's width)
TOLERANCE_MM = 1e-3

_ALL_BORDERS = None


def column_widths(width, ncol, col_widths=None):
    """The widths (mm) of the ``ncol`` columns of a table ``width`` mm wide, as fpdf2's ``Table.render`` sets them
    (the same floating-point operations): ``col_widths`` relative, default equal."""
    if col_widths:
        total = sum(col_widths)
        return [0 + (col_widths[j] / total) * width for j in range(ncol)]
    return [float(1 * (width / ncol) + 0) for _ in range(ncol)]


def _borders():
    """fpdf2's cell style that draws all four borders (created once)."""
    global _ALL_BORDERS
    if _ALL_BORDERS is None:
        from fpdf.enums import TableCellStyle

        _ALL_BORDERS = TableCellStyle(left=True, bottom=True, right=True, top=True)
    return _ALL_BORDERS


def draw_table(pdf, rows, col_widths=None, line_height=None, text_align="LEFT", aligns=None, fills=None):
    """Draw ``rows`` (the first one the headings, in bold) at the current position of ``pdf``, as
    ``with pdf.table(col_widths=col_widths, text_align=text_align, line_height=line_height) as t`` with one
    ``t.row()`` per row and one ``row.cell(text, align=..., style=FontFace(fill_color=...))`` per cell would.

    Parameters
    ----------
    pdf : fpdf.FPDF
        The document, its font already set (the table's font; the headings get its bold face).
    rows : sequence of sequences of str
        The headings, then the body rows, all of one length.
    col_widths : sequence of float, optional
        Relative column widths (fractions of the page width between the margins, as fpdf2 reads them);
        default equal.
    line_height : float, optional
        The height of one line of text (default twice the font size, as fpdf2's).
    text_align : {"LEFT", "CENTER", "RIGHT"}
        The cells' alignment.
    aligns, fills : sequences of sequences, optional
        Per cell (the shape of ``rows``): an alignment that overrides ``text_align``, and a background
        colour ``(r, g, b)``; None where the cell has none.

    Raises
    ------
    ValueError
        If the rows differ in length, ``col_widths`` does not give one width per column, or a row is higher
        than a page.
    """
    from fpdf.enums import Align, MethodReturnValue
    from fpdf.fonts import FontFace

    rows = [[str(c) for c in r] for r in rows]
    if not rows:
        return
    ncol = len(rows[0])
    if any(len(r) != ncol for r in rows):
        raise ValueError(f"draw_table: every row needs {ncol} cells (the headings'), got rows of "
                         f"{sorted({len(r) for r in rows})}; pad the short rows with ''")
    if col_widths is not None and len(col_widths) != ncol:
        raise ValueError(f"draw_table: col_widths gives {len(col_widths)} widths for {ncol} columns; give one "
                         "per column")
    lh = 2 * pdf.font_size if line_height is None else float(line_height)
    table_align = Align.coerce(text_align)
    width = pdf.epw  # fpdf2's default: the page between its margins

    # -- fpdf2's Table.render: position, column widths and x positions (the same float operations)
    prev_l_margin = pdf.l_margin
    pdf.l_margin = (pdf.w - float(width)) / 2  # align="CENTER", fpdf2's default
    pdf.x = pdf.l_margin
    widths = column_widths(width, ncol, col_widths)
    xs = [pdf.l_margin + 0]
    for j in range(ncol):
        xs.append(xs[-1] + widths[j] + 0)

    # -- each cell's font face (the table's, bold in the heading row, its fill) and its height
    family, style, size = pdf.font_family, pdf.font_style, pdf.font_size_pt
    initial = pdf.font_face()
    heading_face = FontFace.combine(initial, FontFace(emphasis="BOLD"))
    faces, heights, cell_heights, fast = [], [], [], []
    for i, row in enumerate(rows):
        base = heading_face if i == 0 else initial
        row_faces, row_h, row_fast = [], [], []
        for j, text in enumerate(row):
            fill = fills[i][j] if fills is not None else None
            face = FontFace.combine(base, FontFace(fill_color=fill)) if fill is not None else base
            align = (aligns[i][j] if aligns is not None else None) or table_align
            row_faces.append((face, Align.coerce(align)))
            if not text:
                row_h.append(0)
                row_fast.append(None)
                continue
            _set_face(pdf, face, family, style, size)
            lines = _wrap(pdf, text, widths[j])
            row_fast.append(lines)
            if lines is not None:
                total = 0.0
                for _ in lines:  # multi_cell's height: one line height after another
                    total += lh
                row_h.append(max(total, lh) + 0 + 0)
            else:
                row_h.append(pdf.multi_cell(w=widths[j], h=lh, text=text, max_line_height=lh, border=0,
                                            align=align, new_x="RIGHT", new_y="TOP", dry_run=True,
                                            output=MethodReturnValue.HEIGHT, padding=0))
        pdf.set_font(family, style, size)
        faces.append(row_faces)
        cell_heights.append(row_h)
        heights.append(max(row_h) or lh)
        fast.append(row_fast)

    # -- render, breaking pages as fpdf2 does (headings repeated; never a heading alone at a page's foot)
    if len(rows) > 1:
        _page_break_if_needed(pdf, heights[0] + heights[1])
    for i in range(len(rows)):
        broke = _page_break_if_needed(pdf, heights[i])
        if broke and pdf.y + heights[i] > pdf.page_break_trigger:
            pdf.l_margin = prev_l_margin
            raise ValueError(f"draw_table: row {i} is {heights[i]:.1f} mm high, more than a page; shorten its "
                             "text or widen its columns")
        if broke and i >= 1:
            _render_row(pdf, rows[0], faces[0], heights[0], cell_heights[0], fast[0], widths, xs, lh, family, style, size)
        _render_row(pdf, rows[i], faces[i], heights[i], cell_heights[i], fast[i], widths, xs, lh, family, style, size)
    pdf.l_margin = prev_l_margin
    pdf.x = pdf.l_margin


def _set_face(pdf, face, family, style, size):
    """The font of ``face`` (family, emphasis, size) onto ``pdf``, as ``use_font_face`` sets it."""
    pdf.set_font(face.family or family, face.emphasis.style if face.emphasis is not None else style,
                 face.size_pt or size)


def _page_break_if_needed(pdf, h):
    """fpdf2's page break before an element ``h`` mm high (its ``_perform_page_break_if_need_be``)."""
    brk = getattr(pdf, "_perform_page_break_if_need_be", None)
    if brk is not None:
        return brk(h)
    if not pdf.will_page_break(h):  # pragma: no cover - an fpdf2 without the private helper
        return False
    x = pdf.x
    pdf.add_page(same=True)
    pdf.x = x
    return True


def _render_row(pdf, row, faces, height, cell_heights, fast, widths, xs, lh, family, style, size):
    """One row: each cell's border and fill, then its text (fpdf2's ``_render_table_row``)."""
    borders = _borders()
    y = pdf.y
    for j, text in enumerate(row):
        face, align = faces[j]
        pdf.set_x(xs[j])
        x1, y1 = pdf.x, pdf.y
        borders.draw_cell_border(pdf, x1, y1, x1 + widths[j], y1 + height, fill_color=face.fill_color)
        if text:
            lines = fast[j]
            if lines is not None:
                dy = (height - cell_heights[j]) / 2
                pdf.y += dy
                if face.fill_color is not None:
                    with pdf.use_font_face(face):
                        _draw_lines(pdf, lines, widths[j], lh, align)
                else:
                    _set_face(pdf, face, family, style, size)
                    pdf.current_font_is_set_on_page = False  # as use_font_face leaves it: each cell sets its font
                    _draw_lines(pdf, lines, widths[j], lh, align)
                    pdf.set_font(family, style, size)
                pdf.y -= dy
            else:
                h_text = cell_heights[j]
                dy = (height - h_text) / 2
                pdf.y += dy
                with pdf.use_font_face(face):
                    pdf.multi_cell(w=widths[j], h=lh, text=text, max_line_height=lh, border=0, align=align,
                                   new_x="RIGHT", new_y="TOP", fill=False, padding=0)
                pdf.y -= dy
        pdf.set_y(y)
    pdf.ln(height)



def _draw_lines(pdf, lines, w, lh, align):
    """``lines`` of one cell, one ``cell()`` each, where ``multi_cell`` puts them (the next line ``lh`` below)."""
    last = len(lines) - 1
    for k, line in enumerate(lines):
        if k < last:
            pdf.cell(w=w, h=lh, text=line, align=align, new_x="LEFT", new_y="NEXT")
        else:
            pdf.cell(w=w, h=lh, text=line, align=align, new_x="RIGHT", new_y="TOP")


def _wrap(pdf, text, w):
    """The lines fpdf2's ``multi_cell(w, text=text)`` breaks ``text`` into (word wrap, padding 0; a line break
    ends a line), or None where this function does not decide it (a font other than a core font, character
    spacing or stretching, a soft hyphen or no-break space in the text, an empty line, a word wider than the
    cell): fpdf2 then does.

    fpdf2's ``MultiLineBreak.get_line`` adds one character at a time and breaks where the line's width plus the
    next character's exceeds the room (the cell less a ``c_margin`` on each side) by more than its
    ``FloatTolerance``: at the last space, dropped (at the character itself if it is a space), else before
    the character.  A core font's width is an integer sum of character widths, scaled (``get_text_width``,
    then ``Fragment.get_width``): the same numbers here, in the same order.
    """
    from fpdf.fonts import CoreFont
    from fpdf.util import FloatTolerance

    font = pdf.current_font
    if (type(font) is not CoreFont or pdf.char_spacing or pdf.font_stretching != 100 or pdf.text_shaping
            or pdf.core_fonts_encoding != "latin-1" or "\r" in text or "\xad" in text
            or "\xa0" in text or "\x0c" in text):
        return None
    if "\n" in text:  # a line break ends a line: each piece between them is broken on its own, as fpdf2 does
        lines = []
        for piece in text.split("\n"):
            got = _wrap(pdf, piece, w) if piece else None  # an empty line: multi_cell's
            if got is None:
                return None
            lines += got
        return lines
    cw, size, k = font.cw, pdf.font_size_pt, pdf.k
    room = w - 0 - 0
    room -= float(pdf.c_margin)
    room -= float(pdf.c_margin)
    try:
        total = sum(map(cw.__getitem__, text))
    except KeyError:
        return None
    if (total * size * 0.001) / k < room - TOLERANCE_MM:  # one line with room to spare: no character decides
        return [text]
    tol = FloatTolerance.TOLERANCE
    lines, i, n = [], 0, len(text)
    while i < n:
        start, used, hint = i, 0, None  # hint: (line length at the last space, its index in text)
        while i < n:
            c = text[i]
            if ((used * size * 0.001) / k + (cw[c] * size * 0.001) / k) - room > tol:
                if c == " ":
                    lines.append(text[start:i])
                    i += 1
                elif hint is not None:
                    lines.append(text[start:hint])
                    i = hint + 1
                else:
                    return None  # a break inside a word: fpdf2's own (or its error)
                break
            if c == " ":
                hint = i
            used += cw[c]
            i += 1
        else:
            if (used * size * 0.001) / k:
                lines.append(text[start:i])
    return lines if lines and all(lines) else None  # an empty line: multi_cell draws it, cell() would not
