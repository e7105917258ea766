"""Code generators that read a lowered Program (one subpackage per target)."""
