raise RuntimeError("this file fails on import")
