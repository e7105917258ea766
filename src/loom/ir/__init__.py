"""The contracts handed between stages: every stage imports these and nothing upstream."""
