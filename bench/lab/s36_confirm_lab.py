"""Session 36, call 6: the committed dispatch (runs of 16-256 bytes walk the input, on the lean form where it fits)
against the forms it replaced: "rcout" (runs of up to 256 bytes in output order: session 35's lean copy for 128 and
256 bytes) and "rclean0" (RowCopy's forms: session 35's input order, 256 x 2, for 64 and 96 bytes). Cases and method
as bench/lab/s36_inlean_lab.py.

  python bench/lab/s36_confirm_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s36_inlean_lab as inlean  # noqa: E402

inlean.main(inlean.CASES[:5], ["default", "rcout", "rclean0"])
