/* xlsx.h - the first worksheet of an Office Open XML workbook (.xlsx) as a table of text cells:
 * VLMEvalKit's default prediction format (PRED_FORMAT=xlsx, written by pandas through openpyxl
 * or xlsxwriter).
 *
 * Why not a library: Debian 12 has no xlsx reader for C (xlsx2csv is a Python program). An xlsx
 * is a ZIP (read by zip.h) of XML parts, parsed here with libxml2's streaming reader: the
 * workbook (xl/workbook.xml, its first <sheet>, resolved through xl/_rels/workbook.xml.rels; else
 * xl/worksheets/sheet1.xml), the shared strings (xl/sharedStrings.xml) and the sheet's rows.
 *
 * Cells (ECMA-376 Part 1, 18.3.1.4 c, 18.18.11 ST_CellType): t="s" an index into the shared
 * strings (the <t> texts of one <si> joined; phonetic runs <rPh> left out), t="inlineStr" the
 * texts of its <is>, t="str" (a formula's text), t="b" 0/1, t="e" an error ("#N/A"), else (t="n"
 * or none) the number as written in <v>. A cell's column comes from its reference (r="C7"); a
 * cell without one takes the next column. Dates stay numbers (styles are not read).
 *
 * The first row that has a cell is the header; rows after it are the table's rows, in order,
 * each with its spreadsheet row number as the line; cells never written are "". A header cell
 * that is empty is named "column_<letter>". Untrusted input: XML entities are not expanded, no
 * network is used, each part is held to 1 GiB, a shared-string index out of range, a column past
 * XFD (16,384) or a row out of order is refused with the file and the row named. */
#ifndef TALLY_IMPORT_XLSX_H
#define TALLY_IMPORT_XLSX_H

#include "tally/err.h"
#include "tally/tabin.h"

/* Reads path's first worksheet into *t (tally/tabin.h: every cell text, "" when absent).
 * TL_EIO when it cannot be read; TL_EINPUT with the file (and part and row) named when it is
 * not a sound workbook or has no header row; TL_ENOMEM. *t is released on failure. */
tl_status tl_xlsx_read(const char *path, tl_tabin *t, tl_err *err);

#endif
