#!/usr/bin/env python3
import argparse
import csv

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Font


def is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("xlsx")
    ap.add_argument("--title", default="Report")
    a = ap.parse_args()

    rows = list(csv.reader(open(a.csv, newline="", encoding="utf-8-sig")))
    wb = Workbook()
    ws = wb.active
    ws.title = a.title[:31]
    for r in rows:
        ws.append([float(c) if is_number(c) else c for c in r])
    for c in ws[1]:
        c.font = Font(bold=True)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = ws.dimensions

    num_cols = [i for i, v in enumerate(rows[1], 1) if is_number(v)] if len(rows) > 1 else []
    for i in num_cols:
        for cell in ws.iter_rows(min_row=2, min_col=i, max_col=i):
            cell[0].number_format = "#,##0.00"
    if num_cols:
        ch = BarChart()
        ch.title = a.title
        ch.add_data(Reference(ws, min_col=num_cols[0], min_row=1, max_row=ws.max_row), titles_from_data=True)
        ch.set_categories(Reference(ws, min_col=1, min_row=2, max_row=ws.max_row))
        ws.add_chart(ch, "H2")
    wb.save(a.xlsx)
    print(f"wrote {a.xlsx} ({ws.max_row - 1} rows)")


if __name__ == "__main__":
    main()
