"""Vendor baselines: what TTNN itself would run, for comparisons and calibration."""
